"""A Redis restart while the lab is idle: the worker reconnects and the next round still runs.

It uses a Redis of its own on a free port, so restarting it disturbs no other test.
"""

import shutil
import subprocess
import time

import pytest

from compare.models import OutputStatus, Round, RoundStatus
from compare.tasks import run_round
from promptlab.celery import app
from tests.compare.queued import wait_for_round
from tests.fixtures.compare_factories import make_group, make_round
from tests.fixtures.processes import free_port, start_worker

pytestmark = [
    pytest.mark.services,
    pytest.mark.skipif(shutil.which("redis-server") is None, reason="needs the redis-server binary"),
]


def start_redis(port: int) -> subprocess.Popen:
    server = subprocess.Popen(
        ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while subprocess.run(["redis-cli", "-p", str(port), "ping"], capture_output=True).stdout.strip() != b"PONG":
        assert time.monotonic() < deadline, "redis-server did not start"
        time.sleep(0.05)
    return server


def run_through(broker_url: str, round_: Round, timeout: float = 30) -> str:
    with app.connection_for_write(broker_url) as connection:
        run_round.apply_async((round_.pk,), queue="restart", connection=connection)
    wait_for_round(round_, timeout)
    return round_.status


def test_after_a_redis_restart_the_worker_reconnects_and_the_next_round_runs(
    transactional_db, workspace, owner, tmp_path
):
    port = free_port()
    broker_url = f"redis://127.0.0.1:{port}/0"
    redis = start_redis(port)
    worker = start_worker(tmp_path, "-Q", "restart", name="restart", REDIS_URL=broker_url)
    group = make_group(workspace, owner)
    try:
        assert run_through(broker_url, make_round(group)) == RoundStatus.DONE
        redis.terminate()
        redis.wait()
        time.sleep(1)  # idle, with Redis gone
        redis = start_redis(port)
        second = make_round(group)
        assert run_through(broker_url, second, timeout=60) == RoundStatus.DONE
        assert set(second.outputs.values_list("status", flat=True)) == {OutputStatus.OK}
    finally:
        worker.stop()
        redis.terminate()
        redis.wait()
