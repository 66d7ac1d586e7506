"""A round's message on a worker: an interactive round runs while the task's thread waits; a batch round goes to the
process's engine loop, where the worker's batch rounds are claimed together and written together.

Run one by one, each batch round cost the process's one batch database thread a claim, a deadline and a finish of
a few queries each: at 100 calls at once with three variants (about 48 rounds a second) that thread was the
bottleneck, and one worker kept the connection less than half busy (bench/bench_experiment_workers.py). Here the
rounds whose messages arrive while a claim is on that thread make up the next claim (`worker.rounds_claim`), and
their answers are written in batches (`batches.RoundBatches`), as the experiment command does.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import weakref

from asgiref.sync import ThreadSensitiveContext
from channels.db import database_sync_to_async

from lab.engine.admission import place_ahead
from lab.engine.fanout import rounds_to_fill
from lab.engine.runtime import Runtime
from lab.jobs.batch import batch_start
from lab.jobs.kinds import Lane

from . import worker
from .batches import RoundBatches
from .execution import round_execute
from .jobs import ROUND, round_lane

logger = logging.getLogger(__name__)

# At most this many rounds a claim: each is a few rows in its statements, and a claim holds the thread the
# process's batch writes also need.
MAX_CLAIM = 200


def round_dispatch(*, round_id: int, queue: str | None = None) -> None:
    """The task's work: an interactive round runs while this thread waits; a batch round goes to the loop (or, when
    this process is full, back to `queue`, the one its message came from)."""
    # A round's message is sent to its lane's queue (lab.jobs.enqueue): that says its lane without a query.
    lane = queue if queue in (Lane.INTERACTIVE, Lane.BATCH) else round_lane(round_id)
    if lane != Lane.BATCH:
        round_execute(round_id=round_id)
        return
    batch_start(ROUND, round_id, lambda engine: batch_round_run(round_id=round_id, engine=engine), queue=queue)


async def batch_round_run(*, round_id: int, engine: Runtime) -> bool:
    """A worker's batch round on the loop: claimed with the others that arrived meanwhile, streamed, written with
    the others that ended meanwhile. False when it was not queued (any more)."""
    rounds = _worker_rounds(engine)
    # Its database work goes through the batch rounds' own thread, never ahead of an interactive round's.
    async with ThreadSensitiveContext(executor=engine.batch_database):
        claimed = await rounds.claim(round_id)
        if claimed is None:
            logger.info("Round %s is not queued any more (claimed before, or cancelled); nothing to do.", round_id)
            return False
        # While its calls wait, the process claims as many rounds ahead as fill their connections once: when a wave
        # of answers ends, the next wave's calls are here already, not in messages still to be fetched and claimed.
        place_ahead(rounds_to_fill(claimed.calls))
        await rounds.batches.run(claimed)
        return True


class WorkerRounds:
    """The claims and writes of one worker process's batch rounds, on its engine loop."""

    def __init__(self, engine: Runtime):
        self.engine = engine
        self._pending: list[tuple[int, asyncio.Future]] = []
        self._wake = asyncio.Event()
        self._started = asyncio.get_running_loop().create_future()
        self.batches: RoundBatches | None = None
        # A context of its own: the tasks it starts live as long as the process, and carry nothing of the round
        # whose job happened to make them (its place among the batch jobs, lab.engine.admission).
        self._task = asyncio.create_task(self._claim_forever(), context=contextvars.Context())

    async def claim(self, round_id: int) -> worker.ClaimedRound | None:
        if self._task.done():  # the claims' task ended: a bug, said here rather than by rounds waiting forever
            self._task.result()
            raise RuntimeError("The worker's batch claims stopped.")
        claimed = asyncio.get_running_loop().create_future()
        self._pending.append((round_id, claimed))
        self._wake.set()
        await self._started
        return await claimed

    async def _claim_forever(self) -> None:
        # The writes' task is started inside this context, which lasts as long as the process: asgiref sends a
        # task's thread-sensitive calls to its context's executor only while that context is open.
        async with ThreadSensitiveContext(executor=self.engine.batch_database):
            self.batches = RoundBatches(self.engine, shorten_deadlines=True, outlive_failed_writes=True)
            self._started.set_result(None)
            while True:
                await self._wake.wait()
                self._wake.clear()
                while self._pending:
                    taken, self._pending = self._pending[:MAX_CLAIM], self._pending[MAX_CLAIM:]
                    await self._claim_together(taken)

    async def _claim_together(self, taken: list[tuple[int, asyncio.Future]]) -> None:
        try:
            claimed = await database_sync_to_async(worker.rounds_claim)(round_ids=[pk for pk, _ in taken])
        except Exception as exc:  # each round's job fails as its own claim did; the next claim goes on
            for _, future in taken:
                if not future.done():
                    future.set_exception(exc)
            return
        by_id = {c.round_id: c for c in claimed}
        for pk, future in taken:
            if not future.done():
                future.set_result(by_id.get(pk))


_rounds: weakref.WeakKeyDictionary[Runtime, WorkerRounds] = weakref.WeakKeyDictionary()


def _worker_rounds(engine: Runtime) -> WorkerRounds:
    """The process's one `WorkerRounds` (made on the loop, which is the only thread that asks)."""
    rounds = _rounds.get(engine)
    if rounds is None:
        rounds = _rounds[engine] = WorkerRounds(engine)
    return rounds
