"""An open page's socket rides out a Redis outage as long as docs/operations.md says (lab.channel_layer.OUTAGE_S,
5 s): through a 3.4 s outage it stays open and the page is told to resync; past that it closes, so the page
reconnects (it closed 0.6 to 0.9 s into an outage before). A real web process on a private Redis."""

import asyncio
import json
import time

import pytest
import websockets

from lab.channel_layer import OUTAGE_S
from lab.events import RESYNC
from tests.fixtures.compare_factories import make_group
from tests.fixtures.processes import login, start_web

pytestmark = [pytest.mark.services, pytest.mark.faults]


async def next_event(socket, accept, timeout: float) -> dict:
    async with asyncio.timeout(timeout):
        while True:
            event = json.loads(await socket.recv())
            if accept(event):
                return event


def test_a_socket_stays_open_through_a_short_outage_and_closes_after_the_documented_one(
    transactional_db, workspace, owner, tmp_path, private_redis
):
    web = start_web(tmp_path, REDIS_URL=private_redis.url)
    group = make_group(workspace, owner)
    client = login(web.url, owner.username)
    ws_url = web.url.replace("http://", "ws://") + f"/ws/groups/{group.pk}/"
    headers = {"Cookie": f"sessionid={client.cookies['sessionid']}", "Origin": web.url}

    async def scenario() -> float:
        async with websockets.connect(ws_url, additional_headers=headers) as socket:
            # The outage: the socket closed after 3.4 s while the docs promised about 5 s.
            await asyncio.to_thread(private_redis.restart, 3.4)
            await next_event(socket, lambda e: e["type"] == RESYNC, timeout=10)
            await asyncio.to_thread(private_redis.stop)
            stopped = time.monotonic()
            with pytest.raises(websockets.ConnectionClosed):
                await next_event(socket, lambda e: False, timeout=OUTAGE_S + 10)
            return time.monotonic() - stopped

    try:
        closed_after = asyncio.run(scenario())
    finally:
        web.stop()
    print(f"closed {closed_after:.1f} s into the outage")
    assert closed_after >= OUTAGE_S - 0.5  # never before the documented time
