"""Many batch rounds claimed in one transaction and finished in another (compare.rounds.worker.rounds_claim and
rounds_complete, used by the experiment command through compare.rounds.batches): the same rows and signals as one
round at a time, in a number of queries that does not grow with the rounds."""

import asyncio
import threading

import pytest
from asgiref.sync import ThreadSensitiveContext
from django.db import connection
from django.test.utils import CaptureQueriesContext

from compare.hooks import round_finished
from compare.models import Output, OutputStatus, Round, RoundStatus
from compare.rounds import batches as round_batches
from compare.rounds.batches import RoundBatches
from compare.rounds.worker import rounds_claim, rounds_complete
from lab.engine.fanout import Result
from lab.engine.runtime import runtime
from lab.jobs.kinds import Lane
from lab.providers.answer import Answer
from tests.fixtures.compare_factories import INSTANT, make_group, make_round, slow_model

pytestmark = pytest.mark.django_db


def batch_rounds(workspace, owner, count: int) -> list[Round]:
    group = make_group(workspace, owner)  # two variants
    return [make_round(group, lane=Lane.BATCH) for _ in range(count)]


def answered(claimed) -> list[Result]:
    ok = Answer(status=OutputStatus.OK, text="**Hello**", finish_reason="stop", input_tokens=3, output_tokens=1)
    return [Result(key=call.key, answer=ok) for round_ in claimed for call in round_.calls]


def test_claiming_many_rounds_takes_the_queued_ones_in_the_order_given(workspace, owner):
    first, second, cancelled, fourth = batch_rounds(workspace, owner, 4)
    Round.objects.transition(cancelled.pk, RoundStatus.CANCELLED)

    claimed = rounds_claim(round_ids=[fourth.pk, first.pk, cancelled.pk, second.pk])

    assert [c.round_id for c in claimed] == [fourth.pk, first.pk, second.pk]
    for round_ in claimed:
        assert [call.key for call in round_.calls] == list(
            Output.objects.filter(round=round_.round_id).order_by("variant__position").values_list("pk", flat=True)
        )
        assert all(call.lane == Lane.BATCH and not call.stream for call in round_.calls)  # nobody listens
    running = Round.objects.filter(status=RoundStatus.RUNNING)
    assert set(running.values_list("pk", flat=True)) == {first.pk, second.pk, fourth.pk}
    assert all(r.deadline > r.started_at for r in running)
    outputs = Output.objects.filter(round__in=[first, second, fourth])
    assert all(o.status == OutputStatus.RUNNING and o.rendered_prompt == "Say something about tea." for o in outputs)
    assert Round.objects.get(pk=cancelled.pk).status == RoundStatus.CANCELLED
    assert rounds_claim(round_ids=[first.pk, second.pk]) == []  # taken: a second claim gets none


def test_rounds_of_several_comparisons_claimed_together_each_ask_their_own_variants_prompts_and_tools(workspace, owner):
    """A claim reads each variant once for all its rounds (compare/rounds/worker.py): every call still gets its own
    variant's prompt, and the tools its own comparison gives it."""
    weather = {"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}
    tea = make_group(workspace, owner, prompts=["Tea {{topic}}?", "Green tea {{topic}}?"], models=(INSTANT,) * 2)
    coffee = make_group(workspace, owner, prompts=["Coffee {{topic}}?", "Black {{topic}}?"], tools=[weather])
    rounds = [make_round(group, lane=Lane.BATCH) for group in (tea, coffee, tea, coffee)]

    claimed = rounds_claim(round_ids=[r.pk for r in rounds])

    asked = [[call.request.messages[-1]["content"] for call in one.calls] for one in claimed]
    assert asked == [["Tea tea?", "Green tea tea?"], ["Coffee tea?", "Black tea?"]] * 2
    tools = [[call.request.tools for call in one.calls] for one in claimed]
    assert tools == [[None, None], [[weather], [weather]]] * 2


def test_a_claim_of_many_rounds_costs_the_queries_of_one(workspace, owner):
    one, *many = batch_rounds(workspace, owner, 9)
    with CaptureQueriesContext(connection) as alone:
        rounds_claim(round_ids=[one.pk])
    with CaptureQueriesContext(connection) as together:
        claimed = rounds_claim(round_ids=[r.pk for r in many])

    assert len(claimed) == 8
    assert len(together) == len(alone)


def test_completing_many_rounds_writes_every_answer_and_signals_once(workspace, owner):
    rounds = batch_rounds(workspace, owner, 3)
    claimed = rounds_claim(round_ids=[r.pk for r in rounds])
    signalled = []

    def heard(sender, round_ids, **kwargs):
        signalled.append(round_ids)

    round_finished.connect(heard, dispatch_uid="test-heard")
    try:
        payloads = rounds_complete(results=answered(claimed), round_ids=[r.pk for r in rounds], events=True)
    finally:
        round_finished.disconnect(dispatch_uid="test-heard")

    assert signalled == [sorted(r.pk for r in rounds)]
    assert all(
        r.status == RoundStatus.DONE and r.finished_at for r in Round.objects.filter(pk__in=[r.pk for r in rounds])
    )
    outputs = Output.objects.filter(round__in=rounds)
    assert len(outputs) == 6
    assert all(o.status == OutputStatus.OK and o.html == "<p><strong>Hello</strong></p>" for o in outputs)
    assert sorted(p["output"] for p in payloads) == sorted(o.pk for o in outputs)


def test_completing_many_rounds_costs_the_queries_of_one(workspace, owner):
    one, *many = batch_rounds(workspace, owner, 9)
    claimed_one, claimed_many = rounds_claim(round_ids=[one.pk]), rounds_claim(round_ids=[r.pk for r in many])
    with CaptureQueriesContext(connection) as alone:
        rounds_complete(results=answered(claimed_one), round_ids=[one.pk], events=False)
    with CaptureQueriesContext(connection) as together:
        rounds_complete(results=answered(claimed_many), round_ids=[r.pk for r in many], events=False)

    assert len(together) == len(alone)
    assert Round.objects.filter(status=RoundStatus.DONE).count() == 9


def test_a_round_cancelled_before_its_write_stays_cancelled_and_keeps_its_answers(workspace, owner):
    kept, cancelled = batch_rounds(workspace, owner, 2)
    claimed = rounds_claim(round_ids=[kept.pk, cancelled.pk])
    Round.objects.transition(cancelled.pk, RoundStatus.CANCELLED)

    rounds_complete(results=answered(claimed), round_ids=[kept.pk, cancelled.pk], events=False)

    assert Round.objects.get(pk=kept.pk).status == RoundStatus.DONE
    assert Round.objects.get(pk=cancelled.pk).status == RoundStatus.CANCELLED
    assert all(o.text == "**Hello**" for o in Output.objects.filter(round=cancelled))


@pytest.mark.django_db(transaction=True)  # the engine's database thread has a connection of its own
def test_a_round_whose_caller_stops_waiting_for_its_write_does_not_stop_the_writer(workspace, owner):
    """The command cancels its rounds' coroutines on Ctrl-C or a crash, and one may be waiting for the write that
    carries its answers. The writer must still hand the others their results (it raised InvalidStateError on the
    cancelled one's, and the rest waited for ever), and the answers are written all the same."""
    group = make_group(workspace, owner, models=(slow_model(tokens=2, token_ms=0, ttft_ms=30),) * 2)
    rounds = [make_round(group, lane=Lane.BATCH) for _ in range(2)]
    engine = runtime()
    database_free = threading.Event()

    async def scenario() -> bool:
        async with ThreadSensitiveContext(executor=engine.batch_database):
            batches = RoundBatches(engine)
            claimed = await batches.claim([round_.pk for round_ in rounds])
            engine.batch_database.submit(database_free.wait)  # the write of both rounds queues behind this
            stopped, kept = (asyncio.create_task(batches.run(one)) for one in claimed)
            await asyncio.sleep(0.5)  # both answered (30 ms), both waiting for the write
            stopped.cancel()
            database_free.set()
            await kept
            await batches.close()
            return stopped.cancelled()

    try:
        assert engine.run(scenario(), timeout=10)
    finally:
        database_free.set()
    assert {r.status for r in Round.objects.filter(pk__in=[r.pk for r in rounds])} == {RoundStatus.DONE}
    assert {o.status for o in Output.objects.filter(round__in=rounds)} == {OutputStatus.OK}


def gathered_writes(engine, rounds, gather_rounds: int, gather_latencies: float) -> tuple[float, bool]:
    """Run the rounds through one RoundBatches that writes `gather_rounds` at a time: the seconds until the first
    round's write was done, and whether the second round was still making its calls then."""

    async def scenario() -> tuple[float, bool]:
        async with ThreadSensitiveContext(executor=engine.batch_database):
            batches = RoundBatches(engine, gather_rounds=gather_rounds, gather_latencies=gather_latencies)
            started = asyncio.get_running_loop().time()
            first, second = (asyncio.create_task(batches.run(one)) for one in await batches.claim(rounds))
            await first
            written_after, second_calling = asyncio.get_running_loop().time() - started, not second.done()
            await second
            await batches.close()
            return written_after, second_calling

    return engine.run(scenario(), timeout=20)


@pytest.mark.django_db(transaction=True)  # the engine's database thread has a connection of its own
def test_a_write_waiting_for_more_rounds_goes_after_its_latencies_while_a_slow_round_still_calls(workspace, owner):
    fast = make_round(
        make_group(workspace, owner, models=(slow_model(tokens=2, token_ms=0, ttft_ms=50),) * 2), lane=Lane.BATCH
    )
    slow = make_round(
        make_group(workspace, owner, models=(slow_model(tokens=2, token_ms=0, ttft_ms=3000),) * 2), lane=Lane.BATCH
    )

    written_after, slow_calling = gathered_writes(runtime(), [fast.pk, slow.pk], gather_rounds=3, gather_latencies=5)

    # Five of the fast round's 50 ms: written after about 0.3 s, not held until the slow round's end at 3 s.
    assert slow_calling and 0.25 <= written_after < 2
    assert {r.status for r in Round.objects.filter(pk__in=[fast.pk, slow.pk])} == {RoundStatus.DONE}


@pytest.mark.django_db(transaction=True)
def test_a_write_waiting_for_more_rounds_goes_at_once_when_no_other_round_is_calling(workspace, owner):
    group = make_group(workspace, owner, models=(slow_model(tokens=2, token_ms=0, ttft_ms=20),) * 2)
    rounds = [make_round(group, lane=Lane.BATCH) for _ in range(2)]

    written_after, _ = gathered_writes(runtime(), [r.pk for r in rounds], gather_rounds=3, gather_latencies=100)

    # Three rounds will never be ready: no wait for them (100 latencies would be the whole GATHER_AHEAD_MAX_S).
    assert written_after < round_batches.GATHER_AHEAD_MAX_S / 2
    assert {r.status for r in Round.objects.filter(pk__in=[r.pk for r in rounds])} == {RoundStatus.DONE}
