"""Websocket consumers: authenticate at connect, authorise before joining, then only relay pushes."""

import asyncio
import contextlib

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncJsonWebsocketConsumer
from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.http import Http404

from .cancellation import raise_if_cancelled
from .events import RESYNC, resync
from .outages import REDIS_DOWN
from .realtime import PUSH, group_rejoin

# How often an open socket renews its group membership. A Redis restart drops every membership while sockets
# stay open; the next renewal restores it and sends the page a `resync` (reload over HTTP what was missed), so
# a page hears events again at most this long after Redis is back.
REJOIN_S = 2.0


class ScopedConsumer(AsyncJsonWebsocketConsumer):
    """Joins one channel group after `authorise` returns its name; closes with 4403 otherwise."""

    channel_group: str | None = None
    membership: asyncio.Task | None = None

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
        self.membership = asyncio.create_task(self.keep_membership())

    async def keep_membership(self) -> None:
        loop = asyncio.get_running_loop()
        checked = loop.time()
        while True:
            raise_if_cancelled()  # gone with its socket, even if the cancel was lost in a send to Redis
            await asyncio.sleep(REJOIN_S)
            # Access is asked again now and then (one query), so someone removed from the workspace stops hearing
            # its events within REALTIME_REAUTHORISE_S instead of for as long as the page stays open.
            if loop.time() - checked >= settings.REALTIME_REAUTHORISE_S:
                checked = loop.time()
                if not await self.still_authorised():
                    await self.close(code=4403)
                    return
            try:
                lost = await group_rejoin(self.channel_layer, self.channel_group, self.channel_name)
            except REDIS_DOWN:
                continue  # Redis is away: the next renewal finds out whether it lost our membership
            if lost:
                await self.send_json({"type": RESYNC, **resync()})

    async def still_authorised(self) -> bool:
        try:
            await database_sync_to_async(self.authorise)(self.scope["user"], self.scope["url_route"]["kwargs"]["pk"])
        except (Http404, PermissionDenied):
            return False
        return True

    async def disconnect(self, code: int) -> None:
        if self.membership is not None:
            self.membership.cancel()
        if self.channel_group:
            with contextlib.suppress(*REDIS_DOWN):  # a socket closing while Redis is away has nothing to leave
                await self.channel_layer.group_discard(self.channel_group, self.channel_name)

    async def receive_json(self, content, **kwargs) -> None:
        # The socket is one-way: all changes go through the HTTP API, so a socket can never bypass its checks.
        return

    async def dispatch(self, message: dict) -> None:
        # Channels closes stale database connections before every handler, through sync_to_async: a hop to the
        # one thread that also runs this process's synchronous views. Every pushed event of a stream then waited
        # behind whatever view ran there (a run's POST takes tens of milliseconds) and paid two thread switches.
        # A push only relays the event and touches no database, so it skips the hop; the rest (connect,
        # disconnect) keeps it, for they query.
        if message["type"] == PUSH:
            await self.push(message)
        else:
            await super().dispatch(message)

    async def push(self, message: dict) -> None:
        await self.send_json(message["event"])


class WorkspaceConsumer(ScopedConsumer):
    def authorise(self, user, object_id: str) -> str:
        from .access import workspace_for_user
        from .realtime import workspace_channel

        return workspace_channel(workspace_for_user(user, object_id).pk)
