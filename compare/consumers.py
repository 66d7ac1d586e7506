"""The comparison socket /ws/groups/<id>/: joins the group's channel once the caller may read the group."""

from lab.consumers import ScopedConsumer
from lab.realtime import group_channel

from .access import group_for_user

# The worker sends a round's deltas of one tick as one channel message of this type; the browser receives
# them as separate `output.delta {output, offset, text}` events, one per answer.
OUTPUT_DELTAS = "output.deltas"


class GroupConsumer(ScopedConsumer):
    def authorise(self, user, object_id: str) -> str:
        return group_channel(group_for_user(user, object_id).pk)

    async def push(self, message: dict) -> None:
        event = message["event"]
        if event["type"] != OUTPUT_DELTAS:
            await super().push(message)
            return
        for delta in event["deltas"]:
            await self.send_json({"type": "output.delta", **delta})
