"""End to end over real processes: a round started over the API, run by a Celery worker against the fake LLM
server, streamed through the Redis channel layer to sockets, and stored."""

import asyncio
import threading

import pytest
from asgiref.sync import sync_to_async
from channels.db import database_sync_to_async
from channels.testing import WebsocketCommunicator
from django.db import connections
from django.test import Client

from lab.consumers import REJOIN_S
from lab.models import Membership
from lab.realtime import abroadcast, group_channel
from lab.services import connection_create, membership_remove
from promptlab.asgi import application
from tests.compare.events import GroupEvents, in_thread
from tests.fixtures.compare_factories import make_group

pytestmark = pytest.mark.services


def fake_connection(workspace, fake_llm, **limits):
    # The OpenRouter protocol, because its catalog carries prices: every answer is costed.
    return connection_create(
        workspace=workspace, name="fake", kind="openrouter", base_url=fake_llm.openai_url, api_key="test-key", **limits
    )


def create_group(api, workspace, models: list[str]) -> dict:
    body = {
        "workspace": workspace.pk,
        "title": "Five at once",
        "mode": "models",
        "shared_variables": {"name": "Ada"},
        "variants": [
            {"label": f"M{i}", "model": model, "prompt": "Greet {{name}}."} for i, model in enumerate(models, 1)
        ],
    }
    response = api.post("/api/v1/groups/", body, format="json")
    assert response.status_code == 201, response.json()
    return response.json()


def deltas_of(events: list[dict], output_id: int) -> list[dict]:
    return [e for e in events if e["type"] == "output.delta" and e["output"] == output_id]


def test_a_five_variant_round_streams_in_order_and_stores_every_answer_while_a_500_fails_only_its_own(
    transactional_db, workspace, api, fake_llm, celery_worker_process
):
    fake_connection(workspace, fake_llm, max_concurrency=5)
    models = [f"fake::{fake_llm.model(tokens=15 + i, token_ms=4, ttft_ms=30)}" for i in range(5)]
    models[2] = f"fake::{fake_llm.model(fault='500', retry_after=0)}"
    group = create_group(api, workspace, models)

    async def run_and_listen() -> tuple[int, list[dict]]:
        async with GroupEvents(group["id"]) as events:
            response = await in_thread(api.post, f"/api/v1/groups/{group['id']}/runs/", {}, format="json")
            assert response.status_code == 202
            await events.until("round.done")
            return response.json()["rounds"][0]["id"], events.seen

    round_id, events = asyncio.run(run_and_listen())
    stored = api.get(f"/api/v1/rounds/{round_id}/").json()

    assert stored["status"] == "done"
    outputs = stored["outputs"]
    assert [o["position"] for o in outputs] == [1, 2, 3, 4, 5]
    assert [o["status"] for o in outputs] == ["ok", "ok", "error", "ok", "ok"]
    assert "500" in outputs[2]["error"] and outputs[2]["text"] == ""
    assert [e["type"] for e in events][:1] == ["round.started"] and events[-1]["type"] == "round.done"
    for output in outputs:
        deltas = deltas_of(events, output["id"])
        done = next(e for e in events if e["type"] == "output.done" and e["output"] == output["id"])
        assert [d["offset"] for d in deltas] == [sum(len(d["text"]) for d in deltas[:i]) for i in range(len(deltas))]
        assert "".join(d["text"] for d in deltas) == output["text"]
        assert done["length"] == len(output["text"]) and done["html"] == output["html"]
        assert all(events.index(d) < events.index(done) for d in deltas)
        if output["status"] == "ok":
            assert output["text"].startswith("t0 t1")
            assert output["ttft_ms"] is not None and output["latency_ms"] >= output["ttft_ms"]
            assert output["input_tokens"] > 0 and output["output_tokens"] > 0
            assert float(output["cost"]) > 0


def session_cookie(user) -> bytes:
    client = Client()
    client.force_login(user)
    return f"sessionid={client.cookies['sessionid'].value}".encode()


async def open_socket(cookie: bytes, group_id: int) -> tuple[WebsocketCommunicator, bool, int | None]:
    socket = WebsocketCommunicator(
        application, f"/ws/groups/{group_id}/", headers=[(b"origin", b"http://localhost"), (b"cookie", cookie)]
    )
    connected, code = await socket.connect()
    return socket, connected, code


def test_a_socket_for_another_workspaces_group_is_refused(transactional_db, workspace, owner, stranger):
    group = make_group(workspace, owner)
    cookie = session_cookie(stranger)

    async def connect() -> tuple[bool, int | None]:
        socket, connected, code = await open_socket(cookie, group.pk)
        await socket.disconnect()
        return connected, code

    assert asyncio.run(connect()) == (False, 4403)


async def receive_until(socket: WebsocketCommunicator, event_type: str, seen: list[dict], timeout: float = 20) -> None:
    async with asyncio.timeout(timeout):
        while not seen or seen[-1]["type"] != event_type:
            seen.append(await socket.receive_json_from(timeout=timeout))


def test_a_client_that_reconnects_mid_stream_sees_a_gap_and_gets_the_full_text_from_the_api(
    transactional_db, workspace, owner, api, fake_llm, celery_worker_process
):
    fake_connection(workspace, fake_llm)
    models = [f"fake::{fake_llm.model(tokens=80, token_ms=10)}" for _ in range(2)]
    group = create_group(api, workspace, models)
    cookie = session_cookie(owner)

    async def scenario() -> tuple[list[dict], list[dict]]:
        first, connected, _ = await open_socket(cookie, group["id"])
        assert connected
        response = await in_thread(api.post, f"/api/v1/groups/{group['id']}/runs/", {}, format="json")
        assert response.status_code == 202
        before: list[dict] = []
        await receive_until(first, "output.delta", before)
        await first.disconnect()
        await asyncio.sleep(0.2)  # the stream goes on without this client
        second, connected, _ = await open_socket(cookie, group["id"])
        after: list[dict] = []
        await receive_until(second, "round.done", after)
        await second.disconnect()
        return before, after

    before, after = asyncio.run(scenario())
    round_id = after[-1]["round"]
    stored = api.get(f"/api/v1/rounds/{round_id}/").json()
    for output in stored["outputs"]:
        resumed = deltas_of(after, output["id"])
        assert resumed and resumed[0]["offset"] > 0  # the client knows it missed text …
        done = next(e for e in after if e["type"] == "output.done" and e["output"] == output["id"])
        assert len(output["text"]) == done["length"]  # … and the API has all of it
        assert output["text"].endswith(resumed[-1]["text"])
        assert output["text"] == " ".join(f"t{i}" for i in range(80))


def test_a_page_that_connects_mid_stream_reloads_most_of_the_text_so_far_over_http(
    transactional_db, workspace, owner, api, fake_llm, celery_worker_process
):
    """Running answers' partial text is saved about every second, so a late viewer misses at most that much."""
    fake_connection(workspace, fake_llm)
    models = [f"fake::{fake_llm.model(tokens=300, token_ms=10)}" for _ in range(2)]
    group = create_group(api, workspace, models)
    cookie = session_cookie(owner)

    async def scenario() -> tuple[dict, list[dict]]:
        socket, connected, _ = await open_socket(cookie, group["id"])
        assert connected
        response = await in_thread(api.post, f"/api/v1/groups/{group['id']}/runs/", {}, format="json")
        round_id = response.json()["rounds"][0]["id"]
        seen: list[dict] = []
        await receive_until(socket, "output.delta", seen)
        await asyncio.sleep(1.6)  # past the first checkpoint, well before the ~3 s answers end
        midway = (await in_thread(api.get, f"/api/v1/rounds/{round_id}/")).json()
        await receive_until(socket, "round.done", seen, timeout=30)
        await socket.disconnect()
        return midway, seen

    midway, events = asyncio.run(scenario())
    for output in midway["outputs"]:
        assert output["status"] == "running"
        assert output["text"].startswith("t0 t1 t2")
        assert " ".join(f"t{i}" for i in range(300)).startswith(output["text"])


def test_a_socket_whose_group_membership_holds_is_never_told_to_resync(transactional_db, workspace, owner):
    # The membership renewal (lab.consumers) asks pages to reload only when Redis lost it (tests/faults).
    group = make_group(workspace, owner)
    cookie = session_cookie(owner)

    async def idle() -> bool:
        socket, connected, _ = await open_socket(cookie, group.pk)
        assert connected
        await asyncio.sleep(2 * REJOIN_S + 0.5)  # two renewals
        quiet = await socket.receive_nothing(timeout=0.2)
        await socket.disconnect()
        return quiet

    assert asyncio.run(idle())


def test_a_pushed_event_reaches_a_socket_while_the_thread_of_synchronous_views_is_busy(
    transactional_db, workspace, owner
):
    # Channels closes stale database connections before each handler, on asgiref's one thread for synchronous
    # code, which also runs every synchronous view: a push waited there behind whatever view ran (a run's POST).
    # Pushes touch no database and skip that hop (lab.consumers); the thread is held here until the event is in.
    group = make_group(workspace, owner)
    cookie = session_cookie(owner)

    async def pushed_while_busy() -> dict:
        socket, connected, _ = await open_socket(cookie, group.pk)
        assert connected
        release = threading.Event()
        busy = asyncio.ensure_future(sync_to_async(release.wait)())  # thread-sensitive: the views' thread
        try:
            assert await abroadcast(group_channel(group.pk), "round.started", round=7)
            event = await socket.receive_json_from(timeout=3)
        finally:
            release.set()
            await busy
        await socket.disconnect()
        return event

    assert asyncio.run(pushed_while_busy()) == {"type": "round.started", "round": 7}


def test_a_member_removed_from_the_workspace_is_cut_off_from_an_open_socket(
    transactional_db, workspace, owner, viewer, settings
):
    settings.REALTIME_REAUTHORISE_S = 0.1  # asked at every renewal, so the test waits one renewal, not ten seconds
    group = make_group(workspace, owner)
    cookie = session_cookie(viewer)

    async def removed_while_open() -> dict:
        socket, connected, _ = await open_socket(cookie, group.pk)
        assert connected
        membership = await in_thread(Membership.objects.get, user=viewer, workspace=workspace)
        await in_thread(membership_remove, membership=membership, actor=owner)
        closed = await socket.receive_output(timeout=3 * REJOIN_S)
        await socket.wait()
        # The consumer's access checks ran on asgiref's sync thread: close its connection while the test may.
        await database_sync_to_async(connections.close_all)()
        return closed

    assert asyncio.run(removed_while_open()) == {"type": "websocket.close", "code": 4403}
