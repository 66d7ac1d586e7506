"""Redis restarted under a running lab: the worker keeps serving, open pages hear events again, nothing stays running.

Each test runs its own Redis on a free port (tests/fixtures/private_services.py), so restarting it disturbs no
other test; the worker and web processes are real ones pointed at it.
"""

import asyncio
import json
import time

import pytest
import websockets

from compare.models import OutputStatus, Round, RoundStatus
from compare.tasks import run_round
from lab.events import RESYNC
from promptlab.celery import app
from tests.compare.queued import wait_for_round
from tests.fixtures.compare_factories import make_group, make_round, slow_model
from tests.fixtures.processes import login, start_web, start_worker

pytestmark = [pytest.mark.services, pytest.mark.faults]

# The page must hear events again this soon after Redis is back (the promise).
EVENTS_AGAIN_WITHIN_S = 5.0


def send_round(broker_url: str, round_: Round) -> None:
    with app.connection_for_write(broker_url) as connection:
        run_round.apply_async((round_.pk,), queue="restart", connection=connection)


def wait_running(round_: Round, timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while Round.objects.get(pk=round_.pk).status != RoundStatus.RUNNING:
        assert time.monotonic() < deadline, "the round did not start"
        time.sleep(0.05)


def assert_finished_cleanly(round_: Round) -> None:
    """Done, or failed with a sentence saying why; no answer left queued or running."""
    round_.refresh_from_db()
    assert round_.status in (RoundStatus.DONE, RoundStatus.FAILED), round_.status
    if round_.status == RoundStatus.FAILED:
        assert round_.error
    assert not round_.outputs.unfinished().exists()


def assert_worker_survived(worker) -> None:
    assert worker.proc.poll() is None, worker.output()[-3000:]
    assert "Unrecoverable error" not in worker.output()


def test_a_redis_restart_mid_round_on_the_prefork_pool_ends_that_round_cleanly_and_the_same_worker_runs_the_next(
    transactional_db, workspace, owner, tmp_path, private_redis
):
    # Celery 5.7.0's worker exited here ("Unrecoverable error: AttributeError(... 'hostname')"): see requirements.txt.
    # The default threads pool goes through the same restart in the socket test below.
    worker = start_worker(tmp_path, "-Q", "restart", "--pool=prefork", name="restart", REDIS_URL=private_redis.url)
    group = make_group(workspace, owner, models=[slow_model(tokens=200, token_ms=10)] * 2)
    try:
        first = make_round(group)
        send_round(private_redis.url, first)
        wait_running(first)
        time.sleep(0.3)  # mid-stream
        private_redis.restart(down_s=3)  # longer than the channel layer's retries: the round's pushes are dropped
        wait_for_round(first, 30)
        second = make_round(group)
        send_round(private_redis.url, second)
        wait_for_round(second, 30)
        assert_worker_survived(worker)
    finally:
        worker.stop()
    assert_finished_cleanly(first)
    assert second.status == RoundStatus.DONE
    assert set(second.outputs.values_list("status", flat=True)) == {OutputStatus.OK}


async def next_event(socket, accept, timeout: float) -> dict:
    async with asyncio.timeout(timeout):
        while True:
            event = json.loads(await socket.recv())
            if accept(event):
                return event


def test_a_redis_restart_mid_round_leaves_the_worker_serving_and_open_pages_hearing_events_within_5_s(
    transactional_db, workspace, owner, tmp_path, private_redis
):
    # The worker runs the default threads pool; Celery 5.7.0's exited here (see requirements.txt).
    env = {"REDIS_URL": private_redis.url}
    worker = start_worker(tmp_path, name="worker", **env)
    web = start_web(tmp_path, **env)
    group = make_group(workspace, owner, models=[slow_model(tokens=100, token_ms=10)] * 2)
    client = login(web.url, owner.username)
    ws_url = web.url.replace("http://", "ws://") + f"/ws/groups/{group.pk}/"
    headers = {"Cookie": f"sessionid={client.cookies['sessionid']}", "Origin": web.url}

    def start_run() -> int:
        response = client.post(
            f"/api/v1/groups/{group.pk}/runs/",
            json={},
            headers={"X-CSRFToken": client.cookies["csrftoken"], "Referer": web.url},
        )
        assert response.status_code == 202, response.text
        return response.json()["rounds"][0]["id"]

    async def scenario() -> tuple[int, int, list[dict]]:
        async with websockets.connect(ws_url, additional_headers=headers) as socket:
            first = await asyncio.to_thread(start_run)
            await next_event(socket, lambda e: e["type"] == "round.started" and e["round"] == first, timeout=20)
            await asyncio.to_thread(private_redis.restart)
            # Redis lost the socket's group membership; the next renewal (every REJOIN_S) restores it and says so.
            await next_event(socket, lambda e: e["type"] == RESYNC, timeout=EVENTS_AGAIN_WITHIN_S)
            second = await asyncio.to_thread(start_run)
            seen = []

            def collect(event: dict) -> bool:
                seen.append(event)
                return event["type"] == "round.done" and event["round"] == second

            await next_event(socket, collect, timeout=30)
            return first, second, seen

    try:
        first_id, second_id, seen = asyncio.run(scenario())
        assert_worker_survived(worker)
    finally:
        web.stop()
        worker.stop()

    assert any(e["type"] == "round.started" and e["round"] == second_id for e in seen)
    assert {"output.delta", "output.done"} <= {e["type"] for e in seen}
    first = Round.objects.get(pk=first_id)
    wait_for_round(first, 30)
    assert_finished_cleanly(first)
    second = Round.objects.get(pk=second_id)
    assert second.status == RoundStatus.DONE
    assert set(second.outputs.values_list("status", flat=True)) == {OutputStatus.OK}
