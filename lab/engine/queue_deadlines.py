"""Per-connection scheduling of provider calls: lanes, queue deadlines and the waiting message.

The limiter (limiter.py) decides when a call may go; this module holds the rules around it that callers share:
how long a call of each lane may wait for its connection, and what a call that waited too long says.
"""

from __future__ import annotations

from django.conf import settings


def queue_deadline_s(lane: str) -> float:
    """How long a call in `lane` may wait for its connection's turn (SCHEDULER_QUEUE_DEADLINE_S)."""
    return settings.SCHEDULER_QUEUE_DEADLINE_S[lane]


def waited_message(*, waited_s: float, connection: str, ahead: int) -> str:
    return f"Not sent: waited {waited_s:.0f} s for connection {connection} ({ahead} ahead)."
