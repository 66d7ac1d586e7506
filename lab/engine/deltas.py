"""Coalesce an answer's token deltas into at most one event per interval, each with its offset in the text.

The first delta goes out at once (time to first token is what a person watches for); later ones are gathered
until the interval has passed. Offsets let a client notice a lost event and reload the answer over HTTP.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable

logger = logging.getLogger(__name__)

COALESCE_S = 0.05

Send = Callable[[int, str], Awaitable[None]]  # (offset, text)


class DeltaCoalescer:
    def __init__(self, send: Send, *, interval_s: float = COALESCE_S):
        self.send = send
        self.interval_s = interval_s
        self.offset = 0  # characters already sent
        self._pending: list[str] = []
        self._last_sent = float("-inf")
        self._timer: asyncio.TimerHandle | None = None
        self._flushing: asyncio.Task | None = None
        self._lock = asyncio.Lock()  # two flushes must reach the channel layer in order

    async def add(self, text: str) -> None:
        if not text:
            return
        self._pending.append(text)
        if self._timer is not None:
            return
        wait_s = self._last_sent + self.interval_s - time.monotonic()
        if wait_s <= 0:
            await self.flush()
        else:
            self._timer = asyncio.get_running_loop().call_later(wait_s, self._flush_later)

    def _flush_later(self) -> None:
        self._timer = None
        self._flushing = asyncio.ensure_future(self.flush())

    async def flush(self) -> None:
        async with self._lock:
            if not self._pending:
                return
            text, offset = "".join(self._pending), self.offset
            self._pending.clear()
            self.offset += len(text)
            self._last_sent = time.monotonic()
            try:
                await self.send(offset, text)
            except Exception:
                # A lost event loses no data: the answer is stored, and the client reloads on an offset gap.
                logger.warning("Could not send a delta event", exc_info=True)

    async def close(self) -> None:
        """Send what is left; call before the answer's final event."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._flushing is not None:
            await self._flushing
        await self.flush()
