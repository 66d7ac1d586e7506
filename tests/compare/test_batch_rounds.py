"""Batch rounds (experiments, runs of many rounds): cheap when nobody watches, the same answers and events when
someone does, and still stopped by a cancel.

These tests commit (`transactional_db`): the engine writes from its own thread.
"""

import threading
import time

import pytest
from django.db import connections
from django.utils import timezone

from compare.models import Output, OutputStatus, RoundStatus
from compare.rounds.execution import round_execute
from compare.rounds.start import round_cancel
from compare.rounds.worker import rounds_complete
from lab.engine.fanout import Result
from lab.jobs.kinds import Lane
from lab.providers.answer import Answer
from tests.compare.events import watched_run
from tests.fixtures.compare_factories import make_group, make_round, slow_model

pytestmark = pytest.mark.django_db(transaction=True)


def outputs_of(round_) -> list[Output]:
    return list(round_.outputs.order_by("variant__position"))


def test_a_batch_round_nobody_watches_stores_every_answer_in_full(workspace, owner):
    group = make_group(workspace, owner, models=[slow_model(tokens=40, token_ms=2)] * 3)
    round_ = make_round(group, lane=Lane.BATCH)
    round_execute(round_id=round_.pk)

    round_.refresh_from_db()
    assert round_.status == RoundStatus.DONE
    for output in outputs_of(round_):
        assert output.status == OutputStatus.OK, output.error
        assert len(output.text.split()) >= 40 and "<strong>Simulated answer</strong>" in output.html
        assert output.finish_reason == "stop" and output.latency_ms >= output.ttft_ms
        assert output.started_at is not None and output.finished_at >= output.started_at


def test_a_watched_batch_round_streams_its_answers_to_the_page(workspace, owner):
    group = make_group(workspace, owner, models=[slow_model(tokens=30, token_ms=5)] * 2)
    round_ = make_round(group, lane=Lane.BATCH)

    seen = watched_run(round_.pk, group.pk, round_execute)
    outputs = {output.pk: output for output in outputs_of(round_)}
    streamed = {
        pk: "".join(e["text"] for e in seen if e["type"] == "output.delta" and e["output"] == pk) for pk in outputs
    }
    assert streamed == {pk: output.text for pk, output in outputs.items()}
    done = [e for e in seen if e["type"] == "output.done"]
    assert sorted(e["output"] for e in done) == sorted(outputs)
    assert all(e["status"] == OutputStatus.OK and e["length"] == len(outputs[e["output"]].text) for e in done)
    assert [e["type"] for e in seen].index("round.started") < [e["type"] for e in seen].index("round.done")


def test_a_cancelled_batch_round_stops_within_about_two_seconds_and_keeps_the_text(workspace, owner):
    group = make_group(workspace, owner, models=[slow_model(tokens=3000, token_ms=5)] * 2)
    round_ = make_round(group, lane=Lane.BATCH)

    def execute() -> None:
        try:
            round_execute(round_id=round_.pk)
        finally:
            connections.close_all()

    worker = threading.Thread(target=execute)
    worker.start()
    deadline = time.monotonic() + 10
    while round_.status != RoundStatus.RUNNING and time.monotonic() < deadline:
        time.sleep(0.05)
        round_.refresh_from_db()
    time.sleep(0.5)

    round_cancel(round=round_, user=owner)
    worker.join(timeout=5)

    assert not worker.is_alive()
    round_.refresh_from_db()
    assert round_.status == RoundStatus.CANCELLED
    for output in outputs_of(round_):
        assert output.status == OutputStatus.CANCELLED
        assert 0 < len(output.text.split()) < 3000


def test_answers_written_together_leave_a_cancelled_row_cancelled_and_a_final_one_alone(workspace, owner):
    group = make_group(workspace, owner, models=[slow_model()] * 3)
    round_ = make_round(group, lane=Lane.BATCH)
    running, cancelled, final = outputs_of(round_)
    Output.objects.filter(pk=running.pk).update(status=OutputStatus.RUNNING)
    Output.objects.filter(pk=cancelled.pk).update(status=OutputStatus.CANCELLED, error="Cancelled by you.")
    Output.objects.filter(pk=final.pk).update(status=OutputStatus.ERROR, error="Refused.", finished_at=timezone.now())
    answer = Answer(status=OutputStatus.OK, text="an *answer*", ttft_ms=5, latency_ms=9, output_tokens=2, cost=0.25)

    results = [Result(key=o.pk, answer=answer) for o in (running, cancelled, final)]
    payloads = rounds_complete(results=results, round_ids=[round_.pk], events=True)

    running.refresh_from_db(), cancelled.refresh_from_db(), final.refresh_from_db()
    assert (running.status, running.text) == (OutputStatus.OK, "an *answer*") and "<em>answer</em>" in running.html
    assert (running.ttft_ms, running.latency_ms, running.output_tokens, float(running.cost)) == (5, 9, 2, 0.25)
    assert (cancelled.status, cancelled.error, cancelled.text) == (
        OutputStatus.CANCELLED,
        "Cancelled by you.",
        "an *answer*",
    )
    assert (final.status, final.error, final.text) == (OutputStatus.ERROR, "Refused.", "")
    assert [payload["output"] for payload in payloads] == sorted([running.pk, cancelled.pk])
