"""The comparison socket /ws/groups/<id>/: joins the group's channel once the caller may read the group."""

from lab.consumers import ScopedConsumer
from lab.events import OUTPUT_DELTA, OUTPUT_DELTAS
from lab.realtime import group_channel

from .access import group_for_user


class GroupConsumer(ScopedConsumer):
    def authorise(self, user, object_id: str) -> str:
        return group_channel(group_for_user(user, object_id).pk)

    async def push(self, message: dict) -> None:
        event = message["event"]
        if event["type"] != OUTPUT_DELTAS:
            await super().push(message)
            return
        for delta in event["deltas"]:
            await self.send_json({"type": OUTPUT_DELTA, **delta})
