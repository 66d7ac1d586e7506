"""The comparison socket /ws/groups/<id>/: joins the group's channel once the caller may read the group."""

from lab.consumers import ScopedConsumer
from lab.realtime import group_channel

from .access import group_for_user


class GroupConsumer(ScopedConsumer):
    def authorise(self, user, object_id: str) -> str:
        return group_channel(group_for_user(user, object_id).pk)
