"""Running a round (the task's code, called in this process): all variants at once, each on its own terms.

The database is written from the engine's thread, so these tests commit: `transactional_db`. Their rounds are
made without enqueueing a task, so a worker started by another test can never take them first.
"""

import asyncio
import threading
import time
import uuid

import pytest
from django.db import connection as db_connection
from django.db import connections
from django.test.utils import CaptureQueriesContext

from compare.models import Mode, Output, OutputStatus, RoundStatus
from compare.rounds.dispatch import round_dispatch
from compare.rounds.execution import round_execute
from compare.rounds.start import round_cancel
from compare.rounds.worker import round_claim, round_finish
from lab.jobs.kinds import Lane
from lab.models import Connection
from lab.services import connection_create
from tests.compare.events import GroupEvents, in_thread
from tests.fixtures.compare_factories import INSTANT, make_group, make_round, slow_model

pytestmark = pytest.mark.django_db(transaction=True)


def outputs_of(round_) -> list[Output]:
    return list(round_.outputs.select_related("variant").order_by("variant__position"))


def execute_in_thread(round_id: int) -> None:
    try:
        round_execute(round_id=round_id)
    finally:
        connections.close_all()  # a thread's connection outlives it otherwise, and blocks dropping the test database


def test_every_variant_answers_and_results_keep_variant_order(workspace, owner):
    # The first variants are the slowest, so they finish last; the stored order is still the variants'.
    models = [slow_model(tokens=30, token_ms=20 - 4 * i) for i in range(5)]
    group = make_group(workspace, owner, models=models)
    round_ = make_round(group)
    round_execute(round_id=round_.pk)

    round_.refresh_from_db()
    assert round_.status == RoundStatus.DONE and round_.finished_at is not None
    outputs = outputs_of(round_)
    assert [o.variant.position for o in outputs] == [1, 2, 3, 4, 5]
    for output in outputs:
        assert output.status == OutputStatus.OK, output.error
        assert output.text.startswith("**Simulated answer**\n\n")
        assert "<strong>Simulated answer</strong>" in output.html
        assert output.rendered_prompt == "Say something about tea."
        assert output.output_tokens > 0 and output.input_tokens > 0 and not output.tokens_estimated
        assert output.ttft_ms is not None and output.latency_ms >= output.ttft_ms
        assert output.cost == 0 and output.finish_reason == "stop"
    assert outputs[0].finished_at > outputs[4].finished_at


def test_rounds_at_a_temperature_are_worded_afresh_and_a_seed_repeats_them(workspace, owner):
    # A simulated model samples like a real one: repeats show variance unless the comparison fixes a seed.
    def two_rounds(params):
        group = make_group(workspace, owner, models=[INSTANT, INSTANT], params=params)
        rounds = [make_round(group) for _ in range(2)]
        for round_ in rounds:
            round_execute(round_id=round_.pk)
        return [outputs_of(round_)[0].text for round_ in rounds]

    first, second = two_rounds({"temperature": 0.7})
    assert first != second and first.startswith("**Simulated answer**")
    first, second = two_rounds({"temperature": 0.7, "seed": 42})
    assert first == second


def test_starts_are_staggered_by_the_groups_setting(workspace, owner):
    group = make_group(workspace, owner, models=[INSTANT] * 3, stagger_ms=200)
    round_ = make_round(group)
    round_execute(round_id=round_.pk)
    starts = [o.started_at for o in outputs_of(round_)]
    gaps = [(later - earlier).total_seconds() for earlier, later in zip(starts, starts[1:], strict=False)]
    assert all(0.19 <= gap < 0.5 for gap in gaps), gaps


def test_a_stalled_variant_times_out_keeping_its_partial_text_while_the_others_finish(workspace, owner):
    stalled = slow_model(tokens=2000, token_ms=10)
    group = make_group(workspace, owner, models=[stalled, INSTANT, stalled], mode=Mode.CUSTOM, timeout_ms=400)
    round_ = make_round(group)
    round_execute(round_id=round_.pk)

    first, second, third = outputs_of(round_)
    assert second.status == OutputStatus.OK
    for output, timeout_ms in ((first, 400), (third, 400)):
        assert output.status == OutputStatus.TIMEOUT
        assert output.error.startswith(f"No complete answer within {timeout_ms / 1000:g} s")
        assert output.error.endswith("the partial answer is kept.")
        assert output.text and len(output.text.split()) < 200
        assert timeout_ms - 50 <= output.latency_ms < timeout_ms + 400
    round_.refresh_from_db()
    assert round_.status == RoundStatus.DONE


def test_a_variant_failing_mid_stream_leaves_the_others_ok(workspace, owner):
    # "flaky" fails half-way through when the seed is a multiple of 3.
    group = make_group(workspace, owner, models=[INSTANT, "simulated::flaky?token_ms=1", INSTANT], params={"seed": 3})
    round_ = make_round(group)
    round_execute(round_id=round_.pk)
    first, flaky, third = outputs_of(round_)
    assert (first.status, third.status) == (OutputStatus.OK, OutputStatus.OK)
    assert flaky.status == OutputStatus.ERROR
    assert flaky.error == "Simulated provider error in the middle of the answer."
    assert flaky.text  # the partial answer is kept


@pytest.mark.parametrize("fault", ["500", "mid_stream"])
def test_a_provider_failure_on_one_variant_leaves_the_other_four_ok(workspace, owner, fake_llm, fault):
    connection_create(workspace=workspace, name="fake", kind="openai_compatible", base_url=fake_llm.openai_url)
    models = [f"fake::{fake_llm.model(tokens=10)}" for _ in range(5)]
    models[1] = f"fake::{fake_llm.model(tokens=10, fault=fault, retry_after=0)}"
    round_ = make_round(make_group(workspace, owner, models=models))
    round_execute(round_id=round_.pk)
    outputs = outputs_of(round_)
    assert [o.status for o in outputs] == ["ok", "error", "ok", "ok", "ok"]
    failed = outputs[1]
    assert failed.error
    assert failed.text == ("" if fault == "500" else "t0 t1 t2 t3 t4")  # a partial answer is kept


def test_a_stalled_http_stream_times_out_keeps_its_text_and_the_request_is_aborted(workspace, owner, fake_llm):
    connection_create(workspace=workspace, name="fake", kind="openai_compatible", base_url=fake_llm.openai_url)
    stalled = fake_llm.model(tokens=10, fault="stall", fault_at=3)
    group = make_group(workspace, owner, models=[f"fake::{stalled}", f"fake::{fake_llm.model()}"], timeout_ms=500)
    round_ = make_round(group)
    round_execute(round_id=round_.pk)
    timed_out, ok = outputs_of(round_)
    assert ok.status == OutputStatus.OK
    assert (timed_out.status, timed_out.text) == (OutputStatus.TIMEOUT, "t0 t1 t2")
    assert fake_llm.wait_for(stalled, lambda counters: counters["disconnected"] == 1)["disconnected"] == 1


def test_a_variant_whose_connection_was_removed_fails_alone(workspace, owner):
    Connection.objects.create(workspace=workspace, name="spare", kind="simulated")
    group = make_group(workspace, owner, models=[INSTANT, "spare::instant"])
    Connection.objects.filter(workspace=workspace, name="spare").delete()
    round_ = make_round(group)
    round_execute(round_id=round_.pk)
    ok, gone = outputs_of(round_)
    assert ok.status == OutputStatus.OK
    assert gone.status == OutputStatus.ERROR and "no connection named “spare”" in gone.error


def test_a_variant_whose_connection_key_cannot_be_decrypted_fails_alone_with_a_readable_error(
    workspace, owner, fake_llm
):
    connection_create(
        workspace=workspace, name="keyed", kind="openai_compatible", base_url=fake_llm.openai_url, api_key="sk-test"
    )
    group = make_group(workspace, owner, models=[INSTANT, f"keyed::{fake_llm.model()}"])
    Connection.objects.filter(name="keyed").update(api_key_encrypted="not-a-fernet-token")
    round_ = make_round(group)
    round_execute(round_id=round_.pk)
    ok, locked = outputs_of(round_)
    assert ok.status == OutputStatus.OK
    assert locked.status == OutputStatus.ERROR
    assert locked.error == "The key of connection keyed cannot be decrypted with the configured keys; enter it again."


def test_a_redelivered_message_does_not_run_the_round_again(workspace, owner, group):
    round_ = make_round(group)
    round_execute(round_id=round_.pk)
    first_run = [(o.pk, o.finished_at, o.text) for o in outputs_of(round_)]
    round_execute(round_id=round_.pk)
    assert [(o.pk, o.finished_at, o.text) for o in outputs_of(round_)] == first_run


def test_answers_already_stored_are_never_asked_for_again(workspace, owner, group):
    round_ = make_round(group)
    kept = outputs_of(round_)[0]
    Output.objects.filter(pk=kept.pk).update(status=OutputStatus.OK, text="an answer from before")
    round_execute(round_id=round_.pk)
    first, second = outputs_of(round_)
    assert (first.status, first.text, first.started_at) == (OutputStatus.OK, "an answer from before", None)
    assert second.status == OutputStatus.OK and second.text.startswith("**Simulated answer**")


def test_cancel_stops_streaming_answers_within_about_a_second_and_keeps_their_text(workspace, owner):
    group = make_group(workspace, owner, models=[slow_model(tokens=2000, token_ms=5)] * 2)
    round_ = make_round(group)
    worker = threading.Thread(target=execute_in_thread, args=(round_.pk,))
    worker.start()
    deadline = time.monotonic() + 10
    while round_.status != RoundStatus.RUNNING and time.monotonic() < deadline:
        time.sleep(0.05)
        round_.refresh_from_db()
    time.sleep(0.4)  # let both answers stream for a while

    cancelled_at = time.monotonic()
    round_cancel(round=round_, user=owner)
    worker.join(timeout=5)
    stopped_after = time.monotonic() - cancelled_at

    assert not worker.is_alive()
    assert stopped_after < 1.5
    round_.refresh_from_db()
    assert round_.status == RoundStatus.CANCELLED
    for output in outputs_of(round_):
        assert output.status == OutputStatus.CANCELLED
        assert output.error == "Cancelled; the partial answer is kept."
        assert 0 < len(output.text.split()) < 1000


def test_a_queued_round_that_is_cancelled_is_never_run(workspace, owner, group):
    round_ = make_round(group)
    round_cancel(round=round_, user=owner)
    round_execute(round_id=round_.pk)
    assert {(o.status, o.text) for o in outputs_of(round_)} == {(OutputStatus.CANCELLED, "")}


def test_the_rounds_of_one_run_report_progress_as_each_finishes(workspace, owner, group):
    run = uuid.uuid4()
    rounds = [make_round(group, run_id=run) for _ in range(2)]

    async def run_and_listen() -> list[dict]:
        async with GroupEvents(group.pk) as events:
            for round_ in rounds:
                await in_thread(round_execute, round_id=round_.pk)
            await events.until("progress", count=2)
            return [e for e in events.seen if e["type"] == "progress"]

    assert asyncio.run(run_and_listen()) == [
        {"type": "progress", "run": str(run), "done": 1, "total": 2},
        {"type": "progress", "run": str(run), "done": 2, "total": 2},
    ]


def test_an_interactive_round_costs_no_query_for_its_lane_or_for_experiments(workspace, owner, group):
    """A person waits for an interactive round's `round.done`: its message's queue says its lane, and its finish
    asks nothing of experiments (their rounds are batch work)."""
    round_ = make_round(group)
    with CaptureQueriesContext(db_connection) as queries:
        round_dispatch(round_id=round_.pk, queue=Lane.INTERACTIVE)
    round_.refresh_from_db()
    assert round_.status == RoundStatus.DONE
    # The claim runs on this thread (its queries are captured); the finish on the engine's, so it is run again here.
    assert not [q for q in queries if q["sql"].startswith('SELECT "compare_round"."lane"')]
    later = make_round(group)
    round_claim(round_id=later.pk)
    with CaptureQueriesContext(db_connection) as queries:
        round_finish(round_id=later.pk)
    assert not [q for q in queries if "compare_experiment" in q["sql"]]
