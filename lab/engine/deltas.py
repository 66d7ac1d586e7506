"""Coalesce the token deltas of every answer in a run into at most one batch per interval.

Each answer's part of a batch carries its offset in that answer's text, so a client can notice a lost event
and reload the answer over HTTP. One batch per tick for the whole run, not one message per answer, keeps the
channel layer's load proportional to the number of runs streaming rather than to the number of answers.
The first delta after a quiet spell goes out at once: time to first token is what a person watches for.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

logger = logging.getLogger(__name__)

COALESCE_S = 0.05


@dataclass(frozen=True)
class Delta:
    key: int  # which answer
    offset: int  # where `text` starts in that answer's text
    text: str


Send = Callable[[list[Delta]], Awaitable[None]]


class DeltaBatcher:
    """Deltas are added by each answer's reader and sent by one flush at a time, never by the reader itself: a
    reader that waited for a send (two trips to Redis, slower on a busy loop) stopped reading its stream
    meanwhile, and its next tokens waited in the socket; with three answers per run all three queued on the
    lock behind each other's sends."""

    def __init__(self, send: Send, *, interval_s: float = COALESCE_S):
        self.send = send
        self.interval_s = interval_s
        self.offsets: dict[int, int] = {}  # characters already sent, per answer
        self._pending: dict[int, list[str]] = {}
        self._last_sent = float("-inf")
        self._timer: asyncio.TimerHandle | None = None
        self._flushing: asyncio.Task | None = None
        self._closed = False
        self._lock = asyncio.Lock()  # batches must reach the channel layer in order

    async def add(self, key: int, text: str) -> None:
        if not text:
            return
        self._pending.setdefault(key, []).append(text)
        self._schedule()

    def _schedule(self) -> None:
        """A flush for what is pending: at once after a quiet spell, else one interval after the last batch; none
        while one is on its way (what arrives meanwhile is scheduled when it is done)."""
        if self._closed or self._timer is not None or (self._flushing is not None and not self._flushing.done()):
            return
        wait_s = max(0.0, self._last_sent + self.interval_s - time.monotonic())
        self._timer = asyncio.get_running_loop().call_later(wait_s, self._flush_later)

    def _flush_later(self) -> None:
        self._timer = None
        self._flushing = asyncio.ensure_future(self.flush())
        self._flushing.add_done_callback(self._flushed)

    def _flushed(self, task: asyncio.Task) -> None:
        if not task.cancelled() and self._pending:
            self._schedule()

    async def flush(self) -> None:
        """Send everything pending now; called before an answer's final event so its deltas come first."""
        async with self._lock:
            if not self._pending:
                return
            batch = []
            for key, parts in self._pending.items():
                text = "".join(parts)
                batch.append(Delta(key=key, offset=self.offsets.get(key, 0), text=text))
                self.offsets[key] = batch[-1].offset + len(text)
            self._pending = {}
            self._last_sent = time.monotonic()
            try:
                await self.send(batch)
            except Exception:
                # A lost event loses no data: answers are stored, and a client reloads on an offset gap.
                logger.warning("Could not send a batch of deltas", exc_info=True)

    async def close(self) -> None:
        self._closed = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._flushing is not None:
            await self._flushing
        await self.flush()
