"""Whether batch rounds were cancelled, asked for all of a process's running batch rounds in one query.

Every round's engine run polls for a cancel twice a second. With many batch rounds streaming side by side that
was a query per round per poll; here the rounds that asked within the last interval are looked up together, at
most once per BATCH_STOP_POLL_S, so a cancelled batch round stops within about a second and a half. Interactive
rounds keep their own poll (selectors.round_stopped): a person watching expects the stop at once.
"""

from __future__ import annotations

import asyncio
import time

from channels.db import database_sync_to_async

from ..models import Round, RoundStatus

BATCH_STOP_POLL_S = 1.0


def rounds_running(round_ids: set[int]) -> set[int]:
    """Those of the rounds still running (not cancelled, failed or finished)."""
    return set(Round.objects.filter(pk__in=round_ids, status=RoundStatus.RUNNING).values_list("pk", flat=True))


class _StopBoard:
    def __init__(self) -> None:
        self.asked: set[int] = set()  # rounds that asked since the last look-up
        self.stopped: set[int] = set()  # of the rounds the last look-up covered, those not running
        self.checked_at = float("-inf")
        self.lock: asyncio.Lock | None = None
        self.loop: asyncio.AbstractEventLoop | None = None

    async def round_stopped(self, round_id: int) -> bool:
        self.asked.add(round_id)
        if time.monotonic() - self.checked_at >= BATCH_STOP_POLL_S:
            if self.loop is not asyncio.get_running_loop():  # the engine's loop (a forked child makes its own)
                self.loop, self.lock = asyncio.get_running_loop(), asyncio.Lock()
            async with self.lock:
                if time.monotonic() - self.checked_at >= BATCH_STOP_POLL_S:
                    asked, self.asked = self.asked, set()
                    self.stopped = asked - await database_sync_to_async(rounds_running)(asked)
                    self.checked_at = time.monotonic()
        return round_id in self.stopped


_board = _StopBoard()


async def batch_round_stopped(round_id: int) -> bool:
    """True once the running batch round was cancelled or failed (known within about BATCH_STOP_POLL_S)."""
    return await _board.round_stopped(round_id)
