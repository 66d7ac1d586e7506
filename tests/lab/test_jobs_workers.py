"""Worker heartbeats (lab.jobs.workers): a real worker is alive while it runs, gone once killed, replaced when its
node restarts; what the comparison page and the sweep ask."""

import time
from datetime import timedelta

import pytest

from lab.jobs.workers import worker_status
from lab.models import WorkerProcess
from tests.fixtures.processes import start_worker

pytestmark = pytest.mark.services

HEARTBEAT_S, LOST_AFTER_S = 0.5, 2


def until(condition, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


def test_a_worker_is_alive_while_it_beats_and_gone_once_killed(transactional_db, tmp_path, settings):
    settings.JOBS_WORKER_LOST_AFTER_S = LOST_AFTER_S
    worker = start_worker(tmp_path, name="beating", JOBS_HEARTBEAT_S=str(HEARTBEAT_S))
    try:
        row = WorkerProcess.objects.get(node__startswith="beating@", stopped_at__isnull=True)
        assert row.pid == worker.proc.pid
        first_seen = row.seen_at
        assert until(lambda: WorkerProcess.objects.get(pk=row.pk).seen_at > first_seen, timeout=5), "no heartbeat"
        assert worker_status().alive
        worker.proc.kill()  # SIGKILL: no goodbye
        assert until(lambda: not worker_status().alive, timeout=LOST_AFTER_S + 5)
    finally:
        worker.stop()
    # Alive until LOST_AFTER_S after its last heartbeat, asked at a fixed instant rather than timed by the wall clock
    # (a loaded machine delays the polling above, never the rule); gone since, as polled above. Other rows the run's
    # other workers left in this database may be newer (worker_status().last_seen is the latest of any).
    last_seen = WorkerProcess.objects.get(pk=row.pk).seen_at
    assert worker_status().last_seen >= last_seen
    assert worker_status(now=last_seen + timedelta(seconds=LOST_AFTER_S) - timedelta(milliseconds=10)).alive


def test_a_restarted_worker_replaces_the_process_of_its_node_at_once(transactional_db, tmp_path):
    first = start_worker(tmp_path, name="node")
    first.proc.kill()
    first.stop()
    second = start_worker(tmp_path, name="node")
    try:
        rows = WorkerProcess.objects.filter(node__startswith="node@").order_by("started_at")
        assert [(r.pid, r.stopped_at is None) for r in rows] == [(first.proc.pid, False), (second.proc.pid, True)]
    finally:
        second.stop()
    assert WorkerProcess.objects.get(pid=second.proc.pid).stopped_at is not None  # a warm shutdown says so too
