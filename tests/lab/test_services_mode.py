"""Services mode end to end: web and a real Celery worker as separate processes on Postgres and Redis."""

import asyncio
import json

import httpx
import pytest
import websockets
from websockets.exceptions import InvalidStatus

from tests.fixtures.processes import login


async def next_event(socket, event_type: str, timeout: float = 20) -> dict:
    async with asyncio.timeout(timeout):
        while True:
            event = json.loads(await socket.recv())
            if event["type"] == event_type:
                return event


def pong_on_socket(web_server, client: httpx.Client, workspace_id: int, idle_s: float = 0) -> dict:
    """Open the workspace's socket, wait `idle_s`, ask for a worker check over HTTP; the `worker.pong` that comes."""
    ws_url = web_server.url.replace("http://", "ws://") + f"/ws/workspaces/{workspace_id}/"
    headers = {"Cookie": f"sessionid={client.cookies['sessionid']}", "Origin": web_server.url}

    async def scenario() -> dict:
        async with websockets.connect(ws_url, additional_headers=headers) as socket:
            await asyncio.sleep(idle_s)
            response = await asyncio.to_thread(
                client.post,
                f"/api/v1/workspaces/{workspace_id}/worker-check/",
                headers={"X-CSRFToken": client.cookies["csrftoken"], "Referer": web_server.url},
            )
            assert response.status_code == 202, response.text
            return await next_event(socket, "worker.pong")

    return asyncio.run(scenario())


@pytest.mark.services
def test_a_task_round_trips_from_web_through_the_worker_to_the_database_and_the_socket(
    transactional_db, owner, workspace, web_server, celery_worker_process
):
    client = login(web_server.url, owner.username)

    event = pong_on_socket(web_server, client, workspace.pk)

    assert event == {"type": "worker.pong", "workspace": workspace.pk}
    workspace.refresh_from_db()
    assert workspace.worker_seen_at is not None
    assert "lab.worker_check" in celery_worker_process.output()


@pytest.mark.services
def test_a_socket_left_idle_longer_than_the_channel_layers_5_s_wait_stays_open(
    transactional_db, owner, workspace, web_server, celery_worker_process
):
    # The consumer waits on Redis 5 s at a time; with redis-py's default 5 s read timeout every idle wait failed
    # and daphne closed the socket with 1011. The layer's socket timeout is longer than its wait.
    client = login(web_server.url, owner.username)

    event = pong_on_socket(web_server, client, workspace.pk, idle_s=6)

    assert event == {"type": "worker.pong", "workspace": workspace.pk}


def handshake_status(web_server, client: httpx.Client, workspace_id: int, origin: str) -> int:
    """The HTTP status that refused the socket's handshake (before any event could be sent)."""
    ws_url = web_server.url.replace("http://", "ws://") + f"/ws/workspaces/{workspace_id}/"
    headers = {"Cookie": f"sessionid={client.cookies['sessionid']}", "Origin": origin}

    async def scenario():
        async with websockets.connect(ws_url, additional_headers=headers) as socket:
            await socket.recv()

    with pytest.raises(InvalidStatus) as refused:
        asyncio.run(scenario())
    return refused.value.response.status_code


@pytest.mark.services
def test_a_socket_for_another_workspace_is_refused(transactional_db, workspace, stranger, web_server):
    client = login(web_server.url, stranger.username)
    assert handshake_status(web_server, client, workspace.pk, origin=web_server.url) == 403


@pytest.mark.services
def test_a_socket_from_a_foreign_origin_is_refused(transactional_db, owner, workspace, web_server):
    client = login(web_server.url, owner.username)
    assert handshake_status(web_server, client, workspace.pk, origin="http://evil.invalid") == 403
