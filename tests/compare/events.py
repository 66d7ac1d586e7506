"""Listen to a group's events through the real channel layer, as every browser socket on that group would."""

from __future__ import annotations

import asyncio

from channels.layers import get_channel_layer

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
                message = await self.layer.receive(self.channel)
                self.seen.append(message["event"])
        return self.seen
