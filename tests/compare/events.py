"""Listen to a group's events through the real channel layer and see them as every browser socket would."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from channels.layers import get_channel_layer
from django.db import connections

from lab.events import OUTPUT_DELTAS
from lab.realtime import group_channel


class GroupEvents:
    def __init__(self, group_id: int):
        self.group_id = group_id
        self.seen: list[dict] = []

    async def __aenter__(self) -> GroupEvents:
        self.layer = get_channel_layer()
        self.channel = await self.layer.new_channel()
        await self.layer.group_add(group_channel(self.group_id), self.channel)
        return self

    async def __aexit__(self, *exc) -> None:
        await self.layer.group_discard(group_channel(self.group_id), self.channel)

    async def until(self, event_type: str, count: int = 1, timeout: float = 30) -> list[dict]:
        """Collect events until `count` of `event_type` have arrived; returns all seen so far."""
        async with asyncio.timeout(timeout):
            while sum(1 for event in self.seen if event["type"] == event_type) < count:
                event = (await self.layer.receive(self.channel))["event"]
                if event["type"] == OUTPUT_DELTAS:  # unpacked as the socket consumer does for a browser
                    self.seen += [{"type": "output.delta", **delta} for delta in event["deltas"]]
                else:
                    self.seen.append(event)
        return self.seen


async def in_thread(func: Callable[..., Any], *args, **kwargs) -> Any:
    """Call blocking code (an API request) from a test's event loop, closing that thread's database connection."""

    def call() -> Any:
        try:
            return func(*args, **kwargs)
        finally:
            connections.close_all()  # otherwise it outlives the thread and blocks dropping the test database

    return await asyncio.to_thread(call)


def watched_run(round_id: int, group_id: int, run: Callable[..., Any]) -> list[dict]:
    """`run(round_id=…)` on a thread while a page listens on the group; every event seen until `round.done`."""

    async def run_and_listen() -> list[dict]:
        async with GroupEvents(group_id) as events:
            await in_thread(run, round_id=round_id)
            return await events.until("round.done")

    return asyncio.run(run_and_listen())
