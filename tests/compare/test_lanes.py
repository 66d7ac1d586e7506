"""Lanes in a real worker: batch rounds waiting for a busy connection hold no worker thread, so an interactive
round on another connection runs at once, and one on the busy connection takes its next free turn ahead of the
batch calls queued before it; every batch answer still completes."""

import time

import pytest

from compare.models import Output, OutputStatus, Round, RoundStatus
from compare.tasks import run_round
from lab.services import connection_create
from tests.fixtures.compare_factories import make_group, make_round
from tests.fixtures.processes import start_worker

pytestmark = pytest.mark.services

WINDOW_S, RPM = 6.0, 5


def until_finished(rounds: list[Round], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while Round.objects.filter(pk__in=[r.pk for r in rounds]).unfinished().exists():
        assert time.monotonic() < deadline, "the rounds did not finish"
        time.sleep(0.1)


def test_an_interactive_round_is_not_held_up_by_a_batch_waiting_for_its_connection(
    transactional_db, workspace, owner, fake_llm, tmp_path
):
    for name, rpm in (("x", RPM), ("y", 10_000)):
        connection_create(
            workspace=workspace, name=name, kind="openai_compatible", base_url=fake_llm.openai_url, rpm=rpm
        )
    busy = fake_llm.model(tokens=3)
    batch_group = make_group(workspace, owner, models=[f"x::{busy}"] * 5, mode="custom")
    batch = [make_round(batch_group, lane="batch") for _ in range(4)]  # 20 calls: four windows of X's rpm
    # Two threads only: were waiting batch rounds to hold them, nothing else could start.
    worker = start_worker(tmp_path, "-Q", "lanes", "--concurrency=2", name="lanes", SCHEDULER_WINDOW_S=str(WINDOW_S))
    try:
        for round_ in batch:
            run_round.apply_async((round_.pk,), queue="lanes")
        time.sleep(1)  # the batch is queued on X by now
        other = make_round(make_group(workspace, owner, models=[f"y::{fake_llm.model(tokens=3)}"] * 2))
        same = make_round(make_group(workspace, owner, models=[f"x::{fake_llm.model(tokens=3)}"] * 2))
        run_round.apply_async((other.pk,), queue="lanes")
        run_round.apply_async((same.pk,), queue="lanes")
        until_finished([other], timeout=5)  # the batch needs about 4 windows; this needs none
        assert Output.objects.filter(round__in=batch).unfinished().exists()
        until_finished([same, *batch], timeout=60)
    finally:
        worker.stop()

    for round_ in (other, same, *batch):
        round_.refresh_from_db()
        assert round_.status == RoundStatus.DONE
    outputs = Output.objects.filter(round__in=batch)
    assert set(outputs.values_list("status", flat=True)) == {OutputStatus.OK}  # none timed out for waiting
    # Its 2 calls arrived after all 20 batch calls, when X's first window was spent: they went with the next window,
    # ahead of every batch call still queued (3 batch calls share that window with them).
    last = max(same.outputs.values_list("finished_at", flat=True))
    finished_after = outputs.filter(finished_at__gt=last).count()
    assert finished_after >= 20 - 2 * RPM, finished_after
