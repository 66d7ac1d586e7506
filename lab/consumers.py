"""Websocket consumers: authenticate at connect, authorise before joining, then only relay pushes."""

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.core.exceptions import PermissionDenied
from django.http import Http404


class ScopedConsumer(AsyncJsonWebsocketConsumer):
    """Joins one channel group after `authorise` returns its name; closes with 4403 otherwise."""

    channel_group: str | None = None

    def authorise(self, user, object_id: str) -> str:
        raise NotImplementedError

    async def connect(self) -> None:
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=4401)
            return
        try:
            self.channel_group = await database_sync_to_async(self.authorise)(
                user, self.scope["url_route"]["kwargs"]["pk"]
            )
        except (Http404, PermissionDenied):
            await self.close(code=4403)
            return
        await self.channel_layer.group_add(self.channel_group, self.channel_name)
        await self.accept()

    async def disconnect(self, code: int) -> None:
        if self.channel_group:
            await self.channel_layer.group_discard(self.channel_group, self.channel_name)

    async def receive_json(self, content, **kwargs) -> None:
        # The socket is one-way: all changes go through the HTTP API, so a socket can never bypass its checks.
        return

    async def push(self, message: dict) -> None:
        await self.send_json(message["event"])


class WorkspaceConsumer(ScopedConsumer):
    def authorise(self, user, object_id: str) -> str:
        from .access import workspace_for_user
        from .realtime import workspace_channel

        return workspace_channel(workspace_for_user(user, object_id).pk)
