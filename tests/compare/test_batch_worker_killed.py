"""SIGKILL of a worker holding batch rounds on its engine loop: the rounds it had claimed are failed readably once
their deadline passes, and the ones it held but had not claimed are still queued, so the sweeper sends them again
as lost messages. One lifecycle (lab.jobs): nothing stays running past its bound."""

import time
from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone

from compare.jobs import ROUND
from compare.models import OutputStatus, Round, RoundStatus
from compare.rounds import ROUND_WORKER_STOPPED, WORKER_STOPPED
from compare.tasks import run_round
from lab.jobs.kinds import kind
from lab.jobs.lifecycle import job_sweep
from lab.services import connection_create
from tests.fixtures.compare_factories import make_group, make_round
from tests.fixtures.processes import start_worker

pytestmark = pytest.mark.services

QUEUE_DEADLINE_S, GRACE_S = 2, 1


def test_a_killed_workers_batch_rounds_are_failed_or_sent_again(transactional_db, workspace, owner, fake_llm, tmp_path):
    connection_create(workspace=workspace, name="slow", kind="openai_compatible", base_url=fake_llm.openai_url)
    group = make_group(workspace, owner, models=[f"slow::{fake_llm.model(ttft_ms=20_000)}"] * 2, timeout_ms=1000)
    rounds = [make_round(group, lane="batch", enqueued_at=timezone.now()) for _ in range(4)]  # as round_start sends
    worker = start_worker(
        tmp_path,
        "-Q",
        "doomed-batch",
        name="doomed-batch",
        SCHEDULER_BATCH_JOBS_PER_PROCESS="2",  # two rounds on its loop; the other two wait for room
        SCHEDULER_BATCH_QUEUE_DEADLINE_S=str(QUEUE_DEADLINE_S),
        COMPARE_ROUND_GRACE_S=str(GRACE_S),
    )
    try:
        for round_ in rounds:
            run_round.apply_async((round_.pk,), queue="doomed-batch")
        running = Round.objects.filter(pk__in=[r.pk for r in rounds], status=RoundStatus.RUNNING)
        deadline = time.monotonic() + 30
        while running.count() < 2:
            assert time.monotonic() < deadline, "the worker should claim two rounds"
            time.sleep(0.1)
        time.sleep(0.5)
        worker.proc.kill()  # SIGKILL: no cleanup of any kind
    finally:
        worker.stop()

    claimed = list(running)
    assert len(claimed) == 2  # the cap held: the others were never claimed
    waiting = Round.objects.filter(pk__in=[r.pk for r in rounds], status=RoundStatus.QUEUED)
    assert waiting.count() == 2
    bound = max(r.deadline for r in claimed)
    # Its bound: the slowest answer's stagger and timeout, the lane's queue deadline, the grace.
    assert (bound - timezone.now()).total_seconds() <= group.longest_run(2).total_seconds() + QUEUE_DEADLINE_S + GRACE_S

    # The sweep as beat runs it, once the claimed rounds' deadline and the lost messages' wait have passed.
    later = max(bound, timezone.now()) + timedelta(seconds=settings.COMPARE_REQUEUE_AFTER_S + 1)
    report = job_sweep(kind(ROUND), now=later)

    assert sorted(report.failed) == sorted(r.pk for r in claimed)
    assert sorted(report.requeued) == sorted(waiting.values_list("pk", flat=True))
    for round_ in claimed:
        round_.refresh_from_db()
        assert (round_.status, round_.error) == (RoundStatus.FAILED, ROUND_WORKER_STOPPED)
        assert {(o.status, o.error) for o in round_.outputs.all()} == {(OutputStatus.ERROR, WORKER_STOPPED)}
    # Sent again to the batch lane; cancel them so no other test's worker spends time on their slow model.
    Round.objects.filter(pk__in=report.requeued).update(status=RoundStatus.CANCELLED)
