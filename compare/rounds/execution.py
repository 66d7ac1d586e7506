"""Run a round on the engine: deltas to the group's channel, each answer to its row, then finish.

This is the one place where comparisons meet the asyncio engine (`lab.engine.runtime`). An interactive round
is claimed on its Celery thread, which then waits while the process's loop streams it. A batch round is one
coroutine on the loop from claim to finish — the task hands it over (lab.engine.admission, compare.rounds.dispatch)
and returns, so its calls wait for their connection's turn without holding a thread. Database work from the loop
goes through thread-sensitive `database_sync_to_async`. Whatever a dead process leaves behind is lab.jobs's: a round it
admitted but had not claimed is still queued (its message was acknowledged, so it is sent again as lost), and a
claimed one is taken back by a worker that starts (or that lives on), or failed at its deadline.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

from asgiref.sync import ThreadSensitiveContext
from channels.db import database_sync_to_async
from django.conf import settings
from django.db import connection

from lab.engine.admission import place_free
from lab.engine.deltas import Delta
from lab.engine.fanout import CallWindows, Result, fan_out
from lab.engine.runtime import Runtime, runtime
from lab.events import (
    OUTPUT_DELTAS,
    OUTPUT_DONE,
    OUTPUT_TOOL_CALL,
    OUTPUT_WAITING,
    output_delta,
    output_deltas,
    output_tool_call,
    output_waiting,
)
from lab.jobs.kinds import Lane
from lab.realtime import abroadcast, abroadcast_to_listeners, alistened, group_channel

from .. import selectors
from ..blind import for_channel
from . import worker
from .stops import batch_round_stopped

logger = logging.getLogger(__name__)

UNEXPECTED = "The worker hit an unexpected error while running this round."


def round_execute(*, round_id: int) -> None:
    """Claim on this thread, stream every variant at once, record, finish. A redelivered message returns at the
    claim."""
    claimed = worker.round_claim(round_id=round_id)
    if claimed is None:
        _not_queued(round_id)
        return
    # The claim is committed: give this thread's database connection back to the pool while the round streams,
    # or a worker's task threads, each waiting on its round, would hold every connection the engine needs.
    if not connection.in_atomic_block:
        connection.close()
    engine = runtime()
    engine.run(_run_claimed(claimed, engine))


async def round_run(*, round_id: int, engine: Runtime) -> bool:
    """The whole round on the loop: claim, stream, record, finish or fail. False when it was not queued (any more).

    Its database work goes through the batch rounds' own thread, never ahead of an interactive round's."""
    async with ThreadSensitiveContext(executor=engine.batch_database):
        claimed = await database_sync_to_async(worker.round_claim)(round_id=round_id)
        if claimed is None:
            _not_queued(round_id)
            return False
        await _run_claimed(claimed, engine)
        return True


async def _run_claimed(claimed: worker.ClaimedRound, engine: Runtime) -> None:
    hooks = RoundHooks(claimed)
    results = await round_stream(claimed, engine, hooks)
    if results is None:
        return
    # The answers not yet stored, the response cache's entries (opt-in) and the finish: one trip to the database,
    # which the round's end (`round.done`) waits for.
    unwritten = [result for result in results if result.key not in hooks.recorded]
    events = not hooks.batch or await alistened(hooks.channel)
    await database_sync_to_async(worker.round_complete)(claimed=claimed, results=unwritten, events=events)


async def round_stream(
    claimed: worker.ClaimedRound,
    engine: Runtime,
    hooks: RoundHooks,
    windows: CallWindows | None = None,
) -> list[Result] | None:
    """Make the claimed round's calls within its time limit; their results, or None when the round ran past its
    limit and was failed (an unexpected error fails it too, and goes on). `windows`: those of the caller's rounds
    (lab.engine.fanout.CallWindows)."""
    round_id = claimed.round_id
    limit_s = claimed.run_s + settings.JOBS_GRACE_S / 2
    try:
        # The limit is enforced here, by the caller: a worker on the threads pool has no soft time limit.
        async with asyncio.timeout(limit_s):
            return await fan_out(claimed.calls, hooks, limiter=engine.limiter, client=engine.client, windows=windows)
    except TimeoutError:
        error = f"The round ran past its time limit ({limit_s:.0f} s)."
        await database_sync_to_async(worker.round_fail)(round_id=round_id, error=error)
        return None
    except Exception:
        await database_sync_to_async(worker.round_fail)(round_id=round_id, error=UNEXPECTED)
        raise


def _log_failure(task: asyncio.Task) -> None:
    if not task.cancelled() and task.exception() is not None:
        # The round keeps its claim's deadline: later than it need be, never too early.
        logger.warning("Could not shorten a round's deadline", exc_info=task.exception())


def _not_queued(round_id: int) -> None:
    logger.info("Round %s is not queued any more (claimed before, or cancelled); nothing to do.", round_id)


# How often the partial text of running answers is saved, so a page that (re)connects mid-stream reloads
# nearly all of it over HTTP; one UPDATE per round per interval, whatever the number of answers.
CHECKPOINT_S = 1.0


class RoundHooks:
    """Where the engine's events go for one round.

    A batch round nobody watches (an experiment's page shows progress, not tokens) sends nothing to the channel
    layer and saves no partial text; its answers are written together when the last one is done. An interactive
    round streams every delta, checkpoints, and records each answer as it finishes but the last, which is written
    with the round's finish (`worker.round_complete`): its `round.done` then waits for one trip to the database, not
    two.
    """

    def __init__(
        self,
        claimed: worker.ClaimedRound,
        *,
        shorten_deadline: bool = True,
        on_gone: Callable[[], None] | None = None,
    ):
        self.on_gone = on_gone  # called once a call, when it is sent or ends unsent (compare.rounds.batches)
        self.round_id = claimed.round_id
        self.watched_at_claim = claimed.watched
        self.blind = claimed.blind
        self.checks = claimed.checks
        self.channel = group_channel(claimed.group_id)
        self.batch = claimed.lane == Lane.BATCH
        self.left = len(claimed.calls)  # answers not yet done
        self.recorded: set[int] = set()  # answers written as they finished; the round's finish writes the others
        self.texts: dict[int, list[str]] = {}
        self.changed: set[int] = set()
        self.checkpointed_at = time.monotonic()
        # Calls not yet sent nor ended; once none is left, the round's place in its process's batch admission goes
        # to the next round and (unless the caller writes its rounds in batches) its deadline is shortened.
        self.unsent = len(claimed.calls)
        self.shorten_deadline = shorten_deadline
        self.sent_keys: set[int] = set()
        self.answer_s = claimed.answer_s
        self.deadline_write: asyncio.Task | None = None

    async def _watched(self) -> bool:
        return not self.batch or await alistened(self.channel)

    async def deltas(self, batch: list[Delta]) -> None:
        for d in batch:
            self.texts.setdefault(d.key, []).append(d.text)
            self.changed.add(d.key)
        if not await self._watched():
            return
        # One channel message per tick for the whole round; the socket consumer hands the browser one
        # `output.delta` event per answer (see GroupConsumer).
        deltas = [output_delta(output=d.key, offset=d.offset, text=d.text) for d in batch]
        await abroadcast(self.channel, OUTPUT_DELTAS, **output_deltas(deltas=deltas))
        if time.monotonic() - self.checkpointed_at >= CHECKPOINT_S:
            await self._checkpoint()

    async def _checkpoint(self) -> None:
        partial = {key: "".join(self.texts[key]) for key in self.changed}
        self.changed.clear()
        self.checkpointed_at = time.monotonic()
        await database_sync_to_async(worker.outputs_checkpoint)(texts=partial)

    async def sending(self, key: int) -> None:
        self.sent_keys.add(key)
        self._one_less_unsent()
        if self.on_gone is not None:
            self.on_gone()

    def _one_less_unsent(self) -> None:
        # The last call to be sent (or to end unsent) while others still run: no call may wait for its connection
        # any more, so a dead worker's round need not be given the lane's queue deadline (an hour for batch work).
        # Written on the side, so the request that goes now does not wait for the database.
        self.unsent -= 1
        if self.unsent == 0:
            # Nothing of this round waits for a connection any more: a batch round leaves its process's place to
            # the next round while its answers stream (lab.engine.admission), so the connection's limit, not the
            # number of rounds, bounds the calls in flight.
            place_free()
        if self.unsent == 0 and self.shorten_deadline and self.left > 0 and self.sent_keys:
            write = database_sync_to_async(worker.round_deadline_shorten)
            self.deadline_write = asyncio.ensure_future(write(round_id=self.round_id, answer_s=self.answer_s))
            self.deadline_write.add_done_callback(_log_failure)

    async def done(self, result: Result) -> None:
        self.changed.discard(result.key)  # the final text is written below; a checkpoint must not follow it
        self.texts.pop(result.key, None)
        self.left -= 1
        if self.unsent and result.key not in self.sent_keys:
            self._one_less_unsent()
        if self.on_gone is not None and result.key not in self.sent_keys:
            self.on_gone()
        if self.batch or not self.left:  # written with the round's finish (or, for many rounds, batches)
            return
        self.recorded.add(result.key)  # even if the write fails: the finish then says it could not be saved
        payload = await database_sync_to_async(worker.output_record)(result=result, checks=self.checks)
        if payload is not None:
            await abroadcast(self.channel, OUTPUT_DONE, **payload)

    async def cancelled(self) -> bool:
        if self.batch:
            return await batch_round_stopped(self.round_id)
        return await database_sync_to_async(selectors.round_stopped)(round_id=self.round_id)

    async def tool_call(self, key: int, index: int, call: dict) -> None:
        """A tool call streams into its column as it arrives (the stored answer then says whether it is valid)."""
        if not await self._watched():
            return
        payload = output_tool_call(output=key, index=index, **call)
        await abroadcast(self.channel, OUTPUT_TOOL_CALL, **payload)

    async def waiting(self, key: int, connection: str, ahead: int) -> None:
        # The column says "waiting for connection X — k ahead" until its request is sent. Nobody watched a batch
        # round's columns when it was claimed: no event, and no look at the channel for each of its calls.
        if not self.watched_at_claim:
            return
        send = abroadcast_to_listeners if self.batch else abroadcast
        payload = for_channel(output_waiting(output=key, connection=connection, ahead=ahead), blind=self.blind)
        await send(self.channel, OUTPUT_WAITING, **payload)
