"""The one broadcast helper: every push to browsers goes through here as a small JSON event."""

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.conf import settings

from .engine import runtime

BROADCAST_TIMEOUT_S = 30.0


def workspace_channel(workspace_id: int) -> str:
    return f"workspace-{workspace_id}"


def group_channel(group_id: int) -> str:
    return f"group-{group_id}"


def _message(event_type: str, payload: dict) -> dict:
    # Channels dispatches "a.b" to the consumer method "a_b"; the client receives {"type": "a.b", ...}.
    return {"type": "push", "event": {"type": event_type, **payload}}


def broadcast(channel_group: str, event_type: str, **payload) -> None:
    """Send an event to everyone listening on a channel group (sync callers: services, tasks)."""
    message = _message(event_type, payload)
    engine = runtime.started()
    if engine is not None and settings.REDIS_URL and not engine.in_loop():
        # In a worker, on the engine's loop, whose Redis connection is open: async_to_sync would make a new
        # loop, and the channel layer a new connection, for every event.
        engine.run(get_channel_layer().group_send(channel_group, message), timeout=BROADCAST_TIMEOUT_S)
        return
    async_to_sync(get_channel_layer().group_send)(channel_group, message)


async def abroadcast(channel_group: str, event_type: str, **payload) -> None:
    """The same, from async code (the run engine's event loop)."""
    await get_channel_layer().group_send(channel_group, _message(event_type, payload))
