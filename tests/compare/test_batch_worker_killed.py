"""SIGKILL of a worker holding batch rounds on its engine loop: the rounds it had claimed are failed readably once
their deadline passes, and the ones it held but had not claimed are still queued, so the sweeper sends them again
as lost messages. One lifecycle (lab.jobs): nothing stays running past its bound."""

import time
from datetime import timedelta

import pytest
from celery import current_app
from django.conf import settings
from django.utils import timezone

from compare.experiments.config import config_read
from compare.experiments.files import DirectoryFiles
from compare.experiments.selectors import experiment_progress
from compare.experiments.services import experiment_create, experiment_start
from compare.models import Output, OutputStatus, Round, RoundStatus
from compare.rounds.jobs import ROUND
from compare.rounds.worker import ROUND_WORKER_STOPPED, WORKER_STOPPED
from compare.tasks import run_round
from lab.jobs.kinds import kind
from lab.jobs.lifecycle import job_sweep
from lab.services import connection_create
from tests.fixtures.compare_factories import make_group, make_round
from tests.fixtures.processes import start_worker

pytestmark = pytest.mark.services

QUEUE_DEADLINE_S, GRACE_S = 2, 1


def until(condition, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


def test_a_killed_workers_batch_rounds_are_failed_or_sent_again(transactional_db, workspace, owner, fake_llm, tmp_path):
    # One call at a time: each claimed round keeps a call waiting for the connection, so keeps its place on the
    # worker's loop (a round whose calls have all been sent would give it up to the next).
    connection_create(
        workspace=workspace, name="slow", kind="openai_compatible", base_url=fake_llm.openai_url, max_concurrency=1
    )
    group = make_group(workspace, owner, models=[f"slow::{fake_llm.model(ttft_ms=20_000)}"] * 2, timeout_ms=3000)
    rounds = [make_round(group, lane="batch", enqueued_at=timezone.now()) for _ in range(4)]  # as round_start sends
    worker = start_worker(
        tmp_path,
        "-Q",
        "doomed-batch",
        name="doomed-batch",
        SCHEDULER_BATCH_JOBS_PER_PROCESS="2",  # two rounds on its loop; the other two wait for room
        SCHEDULER_BATCH_QUEUE_DEADLINE_S=str(QUEUE_DEADLINE_S),
        JOBS_GRACE_S=str(GRACE_S),
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
    later = max(bound, timezone.now()) + timedelta(seconds=settings.JOBS_REQUEUE_AFTER_S + 1)
    report = job_sweep(kind(ROUND), now=later)

    assert sorted(report.failed) == sorted(r.pk for r in claimed)
    assert sorted(report.requeued) == sorted(waiting.values_list("pk", flat=True))
    for round_ in claimed:
        round_.refresh_from_db()
        assert (round_.status, round_.error) == (RoundStatus.FAILED, ROUND_WORKER_STOPPED)
        assert {(o.status, o.error) for o in round_.outputs.all()} == {(OutputStatus.ERROR, WORKER_STOPPED)}
    # Sent again to the batch lane; cancel them so no other test's worker spends time on their slow model.
    Round.objects.filter(pk__in=report.requeued).update(status=RoundStatus.CANCELLED)


ROWS = 6


def send_batch_rounds(broker_url: str, round_ids: list[int]) -> None:
    """Each round's message on the batch queue of another broker, as round_start sends it on the shared one."""
    with current_app.connection_for_write(broker_url) as connection:
        producer = current_app.amqp.Producer(connection)
        for pk in round_ids:
            run_round.apply_async((pk,), queue="batch", producer=producer)


def test_a_restarted_worker_takes_back_a_killed_workers_experiment_rounds_and_the_experiment_finishes(
    transactional_db, workspace, owner, fake_llm, tmp_path, private_redis
):
    connection_create(
        workspace=workspace, name="wide", kind="openai_compatible", base_url=fake_llm.openai_url, max_concurrency=16
    )
    rows = "\n".join(f"  - vars:\n      person: P{i}" for i in range(ROWS))
    config = config_read(
        f"""
name: Killed mid-batch
models:
  - model: wide:{fake_llm.model(ttft_ms=3000, tokens=5)}
prompts:
  - name: greet
    prompt: Greet <<person>>.
dataset:
{rows}
""",
        source="killed.yaml",
        files=DirectoryFiles(tmp_path),
    )
    experiment = experiment_create(workspace=workspace, user=owner, config=config)
    # The default lane deadlines (an hour for batch work): what a claimed round kept before its calls were sent.
    # Its own broker: no other worker of the session can take the rounds, or the one sent again.
    env = {"SCHEDULER_BATCH_JOBS_PER_PROCESS": str(ROWS), "REDIS_URL": private_redis.url}
    worker = start_worker(tmp_path, name="batcher", **env)
    try:
        rounds = experiment_start(experiment=experiment, user=owner, run_here=True)  # queued, nothing sent
        ids = [r.pk for r in rounds]
        send_batch_rounds(private_redis.url, ids)
        running = Round.objects.filter(pk__in=ids, status=RoundStatus.RUNNING)
        assert until(lambda: running.count() == ROWS, timeout=30), "the worker should claim every round"
        # Every call sent: each round's deadline is its answer's time plus the grace, no longer the lane's hour.
        answer_bound = timedelta(seconds=rounds[0].group.longest_run(1).total_seconds() + settings.JOBS_GRACE_S)
        assert until(lambda: all(r.deadline <= timezone.now() + answer_bound for r in running.all()), timeout=10)
        worker.proc.kill()  # SIGKILL mid-batch: every round claimed, every answer on its way
    finally:
        worker.stop()
    assert running.all().count() == ROWS  # nothing finished them: the killed worker's rounds wait for a worker

    restarted = start_worker(tmp_path, name="batcher", **env)  # the same node, as a supervisor restarts it
    back = time.monotonic()
    try:
        assert until(lambda: experiment_progress(experiment)["finished"], timeout=60), restarted.output()[-3000:]
        recovered_s = time.monotonic() - back
    finally:
        restarted.stop()
    assert set(Round.objects.filter(pk__in=ids).values_list("status", flat=True)) == {RoundStatus.DONE}
    assert set(Output.objects.filter(round__in=ids).values_list("status", flat=True)) == {OutputStatus.OK}
    # Promptly: the restart takes the rounds back at once; then one answer's time (3 s) and the writes.
    assert recovered_s < 20, recovered_s
    print(f"experiment finished {recovered_s:.1f} s after the restarted worker was ready")
