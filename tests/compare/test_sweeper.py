"""The sweeper: nothing stays running or queued forever, whatever happens to workers and messages."""

import time
from datetime import timedelta

import pytest
from django.conf import settings
from django.utils import timezone

from compare.models import OutputStatus, Round, RoundStatus
from compare.rounds.execution import round_execute
from compare.rounds.jobs import ROUND
from compare.rounds.worker import ROUND_WORKER_STOPPED, WORKER_STOPPED
from compare.tasks import run_round
from lab.jobs.enqueue import send
from lab.jobs.kinds import kind
from lab.jobs.lifecycle import job_sweep
from lab.models import WorkerProcess
from tests.fixtures.compare_factories import make_group, make_round, slow_model, start_round
from tests.fixtures.processes import BIN, ManagedProcess, child_env, start_worker


def wait_for(condition, timeout: float, step: float = 0.1) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(step)
    return condition()


def rounds_sweep(now=None):
    return job_sweep(kind(ROUND), now=now)


def seconds_to_deadline(round_: Round) -> float:
    round_.refresh_from_db()
    return (round_.deadline - timezone.now()).total_seconds()


def status_of(round_: Round) -> str:
    round_.refresh_from_db()
    return round_.status


@pytest.mark.services
def test_a_round_whose_worker_is_killed_is_failed_by_the_beat_sweeper_without_duplicates(
    transactional_db, workspace, owner, tmp_path, celery_worker_process
):
    # Beat sends the sweep every second; the session's worker runs it.
    sweep_every = 1
    beat = ManagedProcess(
        "beat",
        [str(BIN / "celery"), "-A", "promptlab", "beat", "--loglevel=INFO", "-s", str(tmp_path / "beat-schedule")],
        ready="beat: Starting",
        env=child_env(JOBS_SWEEP_INTERVAL_S=str(sweep_every)),
        log_dir=tmp_path,
    )
    group = make_group(workspace, owner, models=[slow_model(tokens=3000, token_ms=5)] * 2, timeout_ms=2000)
    round_ = make_round(group)
    # Its own queue, so no other worker can take the round; solo pool, so the kill stops the streams too.
    doomed = start_worker(
        tmp_path,
        "--pool=solo",
        "-Q",
        "doomed",
        name="doomed",
        JOBS_GRACE_S="1",
        SCHEDULER_INTERACTIVE_QUEUE_DEADLINE_S="1",
    )
    try:
        beat.wait_ready()
        run_round.apply_async((round_.pk,), queue="doomed")
        assert wait_for(lambda: status_of(round_) == RoundStatus.RUNNING, timeout=15)
        time.sleep(0.3)
        doomed.proc.kill()  # SIGKILL: no cleanup of any kind
        assert status_of(round_) == RoundStatus.RUNNING  # still within its deadline: the sweeper leaves it alone
        seconds_to_deadline = (round_.deadline - timezone.now()).total_seconds()
        assert wait_for(lambda: status_of(round_) == RoundStatus.FAILED, timeout=seconds_to_deadline + sweep_every + 10)
    finally:
        doomed.stop()
        beat.stop()

    assert 0 <= (round_.finished_at - round_.deadline).total_seconds() <= sweep_every + 2
    assert round_.error == ROUND_WORKER_STOPPED
    outputs = list(round_.outputs.all())
    assert len(outputs) == 2
    assert {(o.status, o.error) for o in outputs} == {(OutputStatus.ERROR, WORKER_STOPPED)}
    round_execute(round_id=round_.pk)  # a late redelivery of the message changes nothing
    assert list(round_.outputs.values_list("status", flat=True)) == [OutputStatus.ERROR] * 2


@pytest.mark.django_db
def test_a_running_round_within_its_deadline_is_left_alone(group, owner):
    round_ = start_round(group, owner)
    Round.objects.filter(pk=round_.pk).update(
        status=RoundStatus.RUNNING, deadline=timezone.now() + timedelta(seconds=5)
    )
    report = rounds_sweep()
    assert (report.failed, report.requeued, report.expired) == ([], [], [])
    assert status_of(round_) == RoundStatus.RUNNING


@pytest.mark.django_db
def test_a_running_round_past_its_deadline_is_failed_with_a_readable_error(group, owner):
    round_ = start_round(group, owner)
    Round.objects.filter(pk=round_.pk).update(status=RoundStatus.RUNNING, deadline=timezone.now())
    assert rounds_sweep(now=timezone.now() + timedelta(seconds=1)).failed == [round_.pk]
    assert status_of(round_) == RoundStatus.FAILED
    assert set(round_.outputs.values_list("status", "error")) == {(OutputStatus.ERROR, WORKER_STOPPED)}


@pytest.mark.django_db
def test_a_round_still_queued_after_the_grace_period_is_enqueued_again_once_per_period(
    group, owner, django_capture_on_commit_callbacks
):
    round_ = start_round(group, owner)
    later = timezone.now() + timedelta(seconds=settings.JOBS_REQUEUE_AFTER_S + 1)
    with django_capture_on_commit_callbacks() as callbacks:
        assert rounds_sweep(now=later).requeued == [round_.pk]
        assert rounds_sweep(now=later + timedelta(seconds=1)).requeued == []
    assert [(c.func, c.args) for c in callbacks] == [(send, (ROUND, round_.pk))]
    assert status_of(round_) == RoundStatus.QUEUED


@pytest.mark.django_db
def test_a_round_no_worker_started_for_too_long_is_failed(group, owner):
    round_ = start_round(group, owner)
    much_later = timezone.now() + timedelta(seconds=settings.JOBS_QUEUE_EXPIRY_S + 1)
    assert rounds_sweep(now=much_later).expired == [round_.pk]
    round_.refresh_from_db()
    assert round_.status == RoundStatus.FAILED and "is a worker running?" in round_.error
    assert set(round_.outputs.values_list("status", flat=True)) == {OutputStatus.ERROR}


@pytest.mark.services
def test_with_no_worker_alive_beat_itself_fails_the_overdue_round(
    transactional_db, workspace, owner, tmp_path, private_redis
):
    # Beat's broker is a Redis no worker reads: whatever it sends there is never run, so only beat can sweep.
    sweep_every = 1
    beat = ManagedProcess(
        "beat",
        [str(BIN / "celery"), "-A", "promptlab", "beat", "--loglevel=INFO", "-s", str(tmp_path / "beat-schedule")],
        ready="beat: Starting",
        env=child_env(JOBS_SWEEP_INTERVAL_S=str(sweep_every), REDIS_URL=private_redis.url),
        log_dir=tmp_path,
    )
    group = make_group(workspace, owner, models=[slow_model(tokens=3000, token_ms=5)] * 2, timeout_ms=2000)
    round_ = make_round(group)
    doomed = start_worker(
        tmp_path,
        "--pool=solo",
        "-Q",
        "doomed",
        name="doomed",
        JOBS_GRACE_S="1",  # the lane's queue deadline is the default minute
    )
    # Once both calls are sent, the round's deadline is its answers' time (stagger and 2 s timeout) plus the grace,
    # not the minute its calls might have waited for their connection on top (90 s in all, by default).
    answers_s = group.longest_run(2).total_seconds() + 1
    try:
        beat.wait_ready()
        run_round.apply_async((round_.pk,), queue="doomed")
        assert wait_for(lambda: status_of(round_) == RoundStatus.RUNNING, timeout=15)
        assert wait_for(lambda: seconds_to_deadline(round_) <= answers_s, timeout=5)
        doomed.proc.kill()  # the only worker: none is alive from here on
        killed = time.monotonic()
        assert wait_for(lambda: status_of(round_) == RoundStatus.FAILED, timeout=answers_s + sweep_every + 10)
        failed_after_s = time.monotonic() - killed
    finally:
        doomed.stop()
        beat.stop()

    assert 0 <= (round_.finished_at - round_.deadline).total_seconds() <= sweep_every + 2
    assert round_.error == ROUND_WORKER_STOPPED
    assert set(round_.outputs.values_list("status", "error")) == {(OutputStatus.ERROR, WORKER_STOPPED)}
    assert failed_after_s <= answers_s + sweep_every + 2
    print(f"failed {failed_after_s:.1f} s after the kill")


def claimed_by(round_: Round, worker: WorkerProcess, *, deadline_in_s: float = 60) -> None:
    Round.objects.filter(pk=round_.pk).update(
        status=RoundStatus.RUNNING, claimed_by=worker.pk, deadline=timezone.now() + timedelta(seconds=deadline_in_s)
    )
    round_.outputs.update(status=OutputStatus.RUNNING, text="half an ans")


def worker_seen(seconds_ago: float, *, beating_for: float = 0) -> WorkerProcess:
    now = timezone.now()
    seen, since = now - timedelta(seconds=seconds_ago), now - timedelta(seconds=beating_for)
    return WorkerProcess.objects.create(
        node=f"w{seconds_ago}@here", pid=1, started_at=min(seen, since), seen_at=seen, beating_since=since
    )


@pytest.mark.django_db
def test_a_live_worker_takes_back_the_round_of_a_worker_that_is_gone(
    group, owner, settings, django_capture_on_commit_callbacks
):
    round_ = start_round(group, owner)
    claimed_by(round_, worker_seen(settings.JOBS_WORKER_LOST_AFTER_S + 1))
    worker_seen(0, beating_for=settings.JOBS_WORKER_LOST_AFTER_S + 1)  # alive, and beating all that time
    with django_capture_on_commit_callbacks() as callbacks:
        assert rounds_sweep().reclaimed == [round_.pk]
    assert [(c.func, c.args) for c in callbacks] == [(send, (ROUND, round_.pk))]
    round_.refresh_from_db()
    assert (round_.status, round_.claimed_by, round_.deadline) == (RoundStatus.QUEUED, None, None)
    assert set(round_.outputs.values_list("status", "text")) == {(OutputStatus.QUEUED, "")}


@pytest.mark.django_db
def test_a_round_taken_back_keeps_the_answers_it_had_stored(group, owner, settings):
    round_ = start_round(group, owner)
    claimed_by(round_, worker_seen(settings.JOBS_WORKER_LOST_AFTER_S + 1))
    stored = round_.outputs.order_by("variant__position").first()
    round_.outputs.filter(pk=stored.pk).update(status=OutputStatus.OK, text="a whole answer")
    worker_seen(0, beating_for=settings.JOBS_WORKER_LOST_AFTER_S + 1)
    assert rounds_sweep().reclaimed == [round_.pk]
    assert round_.outputs.get(pk=stored.pk).status == OutputStatus.OK
    assert set(round_.outputs.exclude(pk=stored.pk).values_list("status", flat=True)) == {OutputStatus.QUEUED}


@pytest.mark.django_db
def test_with_no_worker_alive_a_gone_workers_round_is_left_to_its_deadline(group, owner, settings):
    round_ = start_round(group, owner)
    claimed_by(round_, worker_seen(settings.JOBS_WORKER_LOST_AFTER_S + 1))
    assert rounds_sweep().reclaimed == []
    assert status_of(round_) == RoundStatus.RUNNING


@pytest.mark.django_db
def test_a_live_workers_round_is_not_taken_back(group, owner):
    round_ = start_round(group, owner)
    claimed_by(round_, worker_seen(0))
    assert rounds_sweep().reclaimed == []
    assert status_of(round_) == RoundStatus.RUNNING


@pytest.mark.django_db
def test_after_a_database_outage_a_silent_worker_is_not_taken_for_gone_until_another_beat_all_that_time(group, owner):
    # Nobody could beat during the outage: the one worker that beat again first is no witness that the other died.
    round_ = start_round(group, owner)
    silent = worker_seen(settings.JOBS_WORKER_LOST_AFTER_S + 1)
    claimed_by(round_, silent)
    worker_seen(0)  # beating again since just now
    assert rounds_sweep().reclaimed == []
    assert status_of(round_) == RoundStatus.RUNNING
