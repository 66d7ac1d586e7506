"""Batch jobs in flight on this process's engine loop: at most a set number waiting at once, and never a worker's
threads.

A batch task hands its job (a coroutine that claims, streams and records) to the loop and returns, so a call that
waits for its connection's turn holds no worker thread. The cap keeps one process from claiming the whole queue
(other workers get their share, and an experiment's budget cap can still cancel the rounds nobody has claimed):
when the process is full, one task thread waits for a free place and any other batch task says so at once,
leaving its thread to interactive work (lab.jobs.batch also stops the worker taking batch messages meanwhile).

What the cap counts is jobs that may still wait, not jobs streaming: a job whose calls have all been sent says so
(`place_free`) and leaves its place to the next while its answers stream. Counting whole rounds until they ended
bounded a process's calls in flight by the cap times a round's variants (16 rounds × 3 = 48 calls), whatever the
connection allowed: a connection of 100 was kept at under half its limit by one worker and under all of it by two
(bench/bench_experiment_workers.py). Counted this way, the connections' own limits bound what streams, and the cap
bounds only what a process claimed ahead of them — what the cap is for.

How far ahead: at least one connection-limit's worth of calls, or a wave of answers ending together frees slots
that stay empty while the next rounds' messages travel and are claimed, a batch of the cap at a time. A claimed job
says how many jobs like it fill its connections (`place_ahead`, as the experiment command claims ahead,
compare.experiments.runner), and while it waits the cap is at least that: the room grows with the jobs that need it
and shrinks again when they have gone, so a worker that once ran a large connection's experiment does not claim a
small one's rounds wholesale afterwards.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import logging
import threading
from collections import Counter
from collections.abc import Callable, Coroutine
from typing import Any

logger = logging.getLogger(__name__)


class _Place:
    """One admitted job's place among the cap, given back once: when its calls have all gone, or when it ends."""

    def __init__(self, admission: BatchAdmission):
        self.admission, self.taken = admission, True
        self.ahead = 0  # jobs like it that fill its connections (`place_ahead`); 0: not said

    def free(self) -> None:
        self.admission._leave(self)


# The place of the batch job whose task (or a task it started: asyncio copies the context) is running.
_place: contextvars.ContextVar[_Place | None] = contextvars.ContextVar("batch_place", default=None)


def place_free() -> None:
    """The running batch job will not wait for a connection any more (its calls have all been sent or ended): its
    place goes to the next job now, not when its answers are done. Nothing outside a batch job."""
    place = _place.get()
    if place is not None:
        place.free()


def place_ahead(jobs: int) -> None:
    """The running batch job's connections are filled by `jobs` jobs like it: while it holds its place, its process
    admits at least that many waiting jobs (see the module's doc). Nothing outside a batch job."""
    place = _place.get()
    if place is not None:
        place.admission._widen(place, jobs)


async def _in_place(job: Callable[[], Coroutine[Any, Any, Any]], place: _Place) -> Any:
    _place.set(place)  # in the job's own task, so the calls it starts see it
    return await job()


class BatchAdmission:
    def __init__(self, loop: asyncio.AbstractEventLoop, limit: int):
        self.loop = loop
        self.limit = max(1, limit)
        self.in_flight = 0  # jobs on the loop, streaming or not (a warm shutdown waits for them)
        self.held = 0  # of those, the ones holding a place (see `place_free`)
        self._aheads: Counter[int] = Counter()  # the `place_ahead` of the places held
        self._changed = threading.Condition()
        self._waiter = threading.Lock()  # held by the one task thread that waits for a free place
        # Called (on the loop's thread) when a place is freed or the room grows: whoever stopped taking work while
        # full may resume.
        self.on_room: Callable[[], None] | None = None

    def room(self) -> int:
        """Places: the cap, or more while a held job needs more to fill its connections (`place_ahead`)."""
        return max(self.limit, max(self._aheads, default=0))

    def full(self) -> bool:
        return self.held >= self.room()

    def admit(self, job: Callable[[], Coroutine[Any, Any, Any]]) -> bool:
        """Start `job()` on the loop once there is room and return without waiting for it; False (nothing started)
        when the process is full and another thread already waits for a place."""
        with self._changed:
            if self.full():
                if not self._waiter.acquire(blocking=False):
                    return False
                try:
                    self._changed.wait_for(lambda: not self.full())
                finally:
                    self._waiter.release()
            self.held += 1
            self.in_flight += 1
        place = _Place(self)
        try:
            future = asyncio.run_coroutine_threadsafe(_in_place(job, place), self.loop)
        except BaseException:
            self._done(place, None)
            raise
        future.add_done_callback(lambda done: self._done(place, done))
        return True

    def drain(self, timeout_s: float) -> int:
        """Wait up to `timeout_s` for the jobs in flight to end (a worker's warm shutdown); how many are left."""
        with self._changed:
            self._changed.wait_for(lambda: self.in_flight == 0, timeout=timeout_s)
            return self.in_flight

    def _widen(self, place: _Place, jobs: int) -> None:
        with self._changed:
            if not place.taken or jobs <= place.ahead:
                return
            self._count_ahead(place.ahead, -1)
            place.ahead = jobs
            self._count_ahead(jobs, +1)
            self._changed.notify_all()  # the thread waiting for room: there may be more now
        if self.on_room is not None:
            self.on_room()

    def _count_ahead(self, jobs: int, step: int) -> None:
        if jobs:
            self._aheads[jobs] += step
            if not self._aheads[jobs]:
                del self._aheads[jobs]

    def _leave(self, place: _Place) -> None:
        with self._changed:
            if not place.taken:
                return
            place.taken = False
            self.held -= 1
            self._count_ahead(place.ahead, -1)
            self._changed.notify_all()  # the thread waiting for room
        if self.on_room is not None:
            self.on_room()

    def _done(self, place: _Place, future: concurrent.futures.Future | None) -> None:
        with self._changed:
            self.in_flight -= 1
            self._changed.notify_all()  # a shutdown waiting for the last job
        place.free()
        if future is not None and not future.cancelled() and future.exception() is not None:
            # The job records its own failures; what reaches here is a bug, and the sweeper ends its row.
            logger.error("A batch job failed unexpectedly", exc_info=future.exception())
