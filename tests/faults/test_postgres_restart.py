"""Postgres restarted mid-round: the web and the worker recover on their own, the round ends with a readable outcome,
nothing stays running, and the next round runs.

The lab runs on a private Postgres (a copy of the test database) and a private Redis, so restarting them disturbs
no other test.
"""

import time

import httpx
import pytest

from tests.fixtures import processes
from tests.fixtures.compare_factories import make_group, slow_model
from tests.fixtures.processes import login, start_web, start_worker

pytestmark = [pytest.mark.services, pytest.mark.faults]

FINISHED = ("done", "failed", "cancelled")


def get_json(client: httpx.Client, path: str, timeout: float = 20) -> dict:
    """GET until the web process answers 200 (it may fail while Postgres is away, but must recover)."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            response = client.get(path)
            if response.status_code == 200:
                return response.json()
        except httpx.TransportError:
            pass
        assert time.monotonic() < deadline, f"{path} did not answer 200 within {timeout} s"
        time.sleep(0.2)


def wait_status(client: httpx.Client, round_id: int, statuses: tuple[str, ...], timeout: float = 60) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        body = get_json(client, f"/api/v1/rounds/{round_id}/")
        if body["status"] in statuses:
            return body
        assert time.monotonic() < deadline, f"round {round_id} is still {body['status']}"
        time.sleep(0.1)


def test_a_postgres_restart_mid_round_ends_the_round_readably_and_the_next_round_runs(
    transactional_db, workspace, owner, tmp_path, private_postgres, private_redis
):
    group = make_group(workspace, owner, models=[slow_model(tokens=300, token_ms=10)] * 2)
    quick = make_group(workspace, owner)  # for the round after the restart
    env = {
        "DATABASE_URL": private_postgres.copy_database(processes.test_database_url(), "lab"),
        "REDIS_URL": private_redis.url,
    }
    worker = start_worker(tmp_path, name="worker", **env)
    web = start_web(tmp_path, **env)
    try:
        client = login(web.url, owner.username)
        headers = {"X-CSRFToken": client.cookies["csrftoken"], "Referer": web.url}

        def start_run(group_id: int) -> int:
            response = client.post(f"/api/v1/groups/{group_id}/runs/", json={}, headers=headers)
            assert response.status_code == 202, response.text
            return response.json()["rounds"][0]["id"]

        first = start_run(group.pk)
        wait_status(client, first, ("running",))
        time.sleep(0.5)  # mid-stream, with partial text being saved
        private_postgres.restart()
        # Back up: no request gets a connection that died with the old server (pooled connections are checked
        # before use; without that, the first request after the restart answered 500).
        assert [client.get(f"/api/v1/rounds/{first}/").status_code for _ in range(3)] == [200] * 3

        ended = wait_status(client, first, FINISHED)
        second = wait_status(client, start_run(quick.pk), FINISHED)
        assert worker.proc.poll() is None, worker.output()[-3000:]
    finally:
        web.stop()
        worker.stop()

    assert ended["status"] in ("done", "failed")
    if ended["status"] == "failed":
        assert ended["error"]
    assert all(output["status"] in ("ok", "error") for output in ended["outputs"])
    assert all(output["error"] for output in ended["outputs"] if output["status"] == "error")
    assert second["status"] == "done"
    assert [output["status"] for output in second["outputs"]] == ["ok", "ok"]
