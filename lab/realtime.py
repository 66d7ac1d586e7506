"""The one broadcast helper: every push to browsers goes through here as a small JSON event.

A push is a convenience, never the record: the database is. So a push that cannot reach the channel layer (Redis
down or restarting) is logged and dropped instead of failing the vote or the round that made it; pages catch up
over HTTP when their socket tells them to resync (see `group_rejoin` and lab.consumers).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass

from asgiref.sync import async_to_sync
from channels.layers import BaseChannelLayer, get_channel_layer
from channels_redis.core import RedisChannelLayer
from django.conf import settings

from .engine import runtime
from .outages import REDIS_DOWN

logger = logging.getLogger(__name__)

# How long a push may take before it is given up. The channel layer retries a lost Redis connection for about 3 s
# (settings.REDIS_CONNECTION_RETRY); a connection broken by a Redis restart is replaced within its first few
# retries (0.1 + 0.2 + 0.4 s), so these keep that recovery and give up only on a Redis that is away. A request that
# pushes (a vote's tally) keeps a person waiting, so it gives up sooner than the worker.
REQUEST_BROADCAST_TIMEOUT_S = 1.0
WORKER_BROADCAST_TIMEOUT_S = 2.0


def workspace_channel(workspace_id: int) -> str:
    return f"workspace-{workspace_id}"


def group_channel(group_id: int) -> str:
    return f"group-{group_id}"


# The channel-layer message type of every event for a page: the consumers' `push` relays its "event" to the socket.
PUSH = "push"


def _message(event_type: str, payload: dict) -> dict:
    # Channels dispatches "a.b" to the consumer method "a_b"; the client receives {"type": "a.b", ...}.
    return {"type": PUSH, "event": {"type": event_type, **payload}}


@dataclass
class Deliveries:
    """What the broadcasts of one block of code came to: `delayed` once any of them could not be sent."""

    delayed: bool = False


_deliveries: ContextVar[Deliveries | None] = ContextVar("deliveries", default=None)


@contextmanager
def deliveries() -> Iterator[Deliveries]:
    """Collect the outcome of the broadcasts made inside (on_commit ones included), for a view to tell its caller
    that its write is saved but the live update is delayed."""
    outcome = Deliveries()
    token = _deliveries.set(outcome)
    try:
        yield outcome
    finally:
        _deliveries.reset(token)


def _undelivered(channel_group: str, event_type: str, error: Exception) -> None:
    logger.warning(
        "Live update %s to %s not sent (%r); pages resync when the channel layer is back.",
        event_type,
        channel_group,
        error,
    )
    outcome = _deliveries.get()
    if outcome is not None:
        outcome.delayed = True


def broadcast(channel_group: str, event_type: str, **payload) -> bool:
    """Send an event to everyone listening on a channel group (sync callers: services, tasks); False if it could
    not be sent."""
    message = _message(event_type, payload)
    engine = runtime.started()
    try:
        if engine is not None and settings.REDIS_URL and not engine.in_loop():
            # In a worker, on the engine's loop, whose Redis connection is open: async_to_sync would make a new
            # loop, and the channel layer a new connection, for every event.
            engine.run(_send_within(channel_group, message, WORKER_BROADCAST_TIMEOUT_S))
        else:
            async_to_sync(_send_within)(channel_group, message, REQUEST_BROADCAST_TIMEOUT_S)
    except REDIS_DOWN as error:
        _undelivered(channel_group, event_type, error)
        return False
    return True


async def _send_within(channel_group: str, message: dict, timeout: float) -> None:
    async with asyncio.timeout(timeout):  # TimeoutError is an OSError: one of REDIS_DOWN
        await get_channel_layer().group_send(channel_group, message)


async def abroadcast(channel_group: str, event_type: str, **payload) -> bool:
    """The same, from async code (the run engine's event loop)."""
    try:
        await _send_within(channel_group, _message(event_type, payload), WORKER_BROADCAST_TIMEOUT_S)
    except REDIS_DOWN as error:
        _undelivered(channel_group, event_type, error)
        return False
    return True


# How long "somebody listens on this group" (or not) is believed before Redis is asked again: a page that opens
# meanwhile misses at most this much of a batch's stream, and reloads it over HTTP when its offsets do not match.
LISTENERS_TTL_S = 1.0
_listeners_seen: dict[str, tuple[float, bool]] = {}  # channel group -> (when asked, anyone there)


async def alistened(channel_group: str) -> bool:
    """Whether any socket is in the group, asked at most every LISTENERS_TTL_S per group: batch work sends
    nothing to a channel layer nobody reads (an unreachable Redis counts as listened: the send then says so)."""
    now = time.monotonic()
    seen = _listeners_seen.get(channel_group)
    if seen is not None and now - seen[0] < LISTENERS_TTL_S:
        return seen[1]
    try:
        async with asyncio.timeout(WORKER_BROADCAST_TIMEOUT_S):
            anyone = await _group_size(get_channel_layer(), channel_group) > 0
    except REDIS_DOWN:
        anyone = True
    _listeners_seen[channel_group] = (now, anyone)
    return anyone


async def _group_size(layer: BaseChannelLayer, channel_group: str) -> int:
    if not isinstance(layer, RedisChannelLayer):
        return len(getattr(layer, "groups", {}).get(channel_group, ()))
    # Members not renewed within group_expiry are the ones group_send discards: not counted either.
    key = layer._group_key(channel_group)
    connection = layer.connection(layer.consistent_hash(channel_group))
    return await connection.zcount(key, int(time.time()) - layer.group_expiry, "+inf")


async def abroadcast_to_listeners(channel_group: str, event_type: str, **payload) -> bool:
    """`abroadcast`, skipped when nobody listens on the group; False only when a send failed."""
    if not await alistened(channel_group):
        return True
    return await abroadcast(channel_group, event_type, **payload)


def listened(channel_group: str) -> bool:
    """`alistened` for sync callers (services, tasks), on the engine's loop when this process has one."""
    engine = runtime.started()
    if engine is not None and not engine.in_loop():
        return engine.run(alistened(channel_group))
    return async_to_sync(alistened)(channel_group)


async def group_rejoin(layer: BaseChannelLayer, channel_group: str, channel: str) -> bool:
    """Renew a socket's membership of its group; True when it had been lost, so events may have been missed.

    With Redis, membership is a sorted set in Redis only: a restart (or a flush) empties it while the socket stays
    open. Renewing it is channels_redis's own group_add (ZADD with a fresh timestamp, then EXPIRE), done here
    to read ZADD's answer: 1 means the channel was not in the group any more. The in-memory layer never loses it.
    """
    if not isinstance(layer, RedisChannelLayer):
        await layer.group_add(channel_group, channel)
        return False
    key = layer._group_key(channel_group)  # the same key group_add and group_send use
    connection = layer.connection(layer.consistent_hash(channel_group))
    added = await connection.zadd(key, {channel: time.time()})
    await connection.expire(key, layer.group_expiry)
    return added == 1
