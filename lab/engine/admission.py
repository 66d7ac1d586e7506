"""Batch jobs in flight on this process's engine loop: at most a set number at once, and never a worker's threads.

A batch task hands its job (a coroutine that claims, streams and records) to the loop and returns, so a call that
waits for its connection's turn holds no worker thread. The cap keeps one process from claiming the whole queue
(other workers get their share, and an experiment's budget cap can still cancel the rounds nobody has claimed):
when the process is full, one task thread waits for a free place and any other batch task says so at once,
leaving its thread to interactive work (lab.jobs.batch also stops the worker taking batch messages meanwhile).
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import logging
import threading
from collections.abc import Callable, Coroutine
from typing import Any

logger = logging.getLogger(__name__)


class BatchAdmission:
    def __init__(self, loop: asyncio.AbstractEventLoop, limit: int):
        self.loop = loop
        self.limit = max(1, limit)
        self.in_flight = 0
        self._changed = threading.Condition()
        self._waiter = threading.Lock()  # held by the one task thread that waits for a free place
        # Called (on the loop's thread) after each job ends: whoever stopped taking work while full may resume.
        self.on_done: Callable[[], None] | None = None

    def full(self) -> bool:
        return self.in_flight >= self.limit

    def admit(self, job: Callable[[], Coroutine[Any, Any, Any]]) -> bool:
        """Start `job()` on the loop once there is room and return without waiting for it; False (nothing started)
        when the process is full and another thread already waits for a place."""
        with self._changed:
            if self.in_flight >= self.limit:
                if not self._waiter.acquire(blocking=False):
                    return False
                try:
                    self._changed.wait_for(lambda: self.in_flight < self.limit)
                finally:
                    self._waiter.release()
            self.in_flight += 1
        try:
            future = asyncio.run_coroutine_threadsafe(job(), self.loop)
        except BaseException:
            self._done(None)
            raise
        future.add_done_callback(self._done)
        return True

    def drain(self, timeout_s: float) -> int:
        """Wait up to `timeout_s` for the jobs in flight to end (a worker's warm shutdown); how many are left."""
        with self._changed:
            self._changed.wait_for(lambda: self.in_flight == 0, timeout=timeout_s)
            return self.in_flight

    def _done(self, future: concurrent.futures.Future | None) -> None:
        with self._changed:
            self.in_flight -= 1
            self._changed.notify_all()  # the thread waiting for room, and a shutdown waiting for the last job
        if self.on_done is not None:
            self.on_done()
        if future is not None and not future.cancelled() and future.exception() is not None:
            # The job records its own failures; what reaches here is a bug, and the sweeper ends its row.
            logger.error("A batch job failed unexpectedly", exc_info=future.exception())
