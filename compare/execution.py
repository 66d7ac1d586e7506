"""Run a claimed round on the engine: deltas to the group's channel, each answer to its row, then finish.

This is the one place where comparisons meet the asyncio engine. The Celery task claims the round on its own
thread, hands the streaming to the process's engine loop (`lab.engine.runtime`) and waits; database work from
the loop goes through thread-sensitive `database_sync_to_async`.
"""

from __future__ import annotations

import logging
import time

from channels.db import database_sync_to_async
from django.conf import settings
from django.db import connection

from lab.engine.deltas import Delta
from lab.engine.fanout import Result, fan_out
from lab.engine.runtime import Runtime, RunTimedOut, runtime
from lab.events import OUTPUT_DELTAS
from lab.jobs.kinds import Lane
from lab.realtime import abroadcast, abroadcast_to_listeners, alistened, group_channel

from . import response_cache, rounds, selectors
from .round_stops import batch_round_stopped

logger = logging.getLogger(__name__)


def round_execute(*, round_id: int) -> None:
    """Claim, stream every variant at once, record, finish. A redelivered message returns at the claim."""
    claimed = rounds.round_claim(round_id=round_id)
    if claimed is None:
        logger.info("Round %s is not queued any more (claimed before, or cancelled); nothing to do.", round_id)
        return
    # The claim is committed: give this thread's database connection back to the pool while the round streams,
    # or a worker's task threads, each waiting on its round, would hold every connection the engine needs.
    if not connection.in_atomic_block:
        connection.close()
    engine = runtime()
    limit_s = claimed.run_s + settings.COMPARE_ROUND_GRACE_S / 2
    try:
        # The limit is enforced here, by the caller: a worker on the threads pool has no soft time limit.
        engine.run(_stream(claimed, engine), timeout=limit_s)
    except RunTimedOut:
        rounds.round_fail(round_id=round_id, error=f"The round ran past its time limit ({limit_s:.0f} s).")
        return
    except Exception:
        rounds.round_fail(round_id=round_id, error="The worker hit an unexpected error while running this round.")
        raise
    # Opt-in response cache: the complete answers this round fetched are kept for the next identical call.
    response_cache.round_cache_store(workspace_id=claimed.workspace_id, keys=claimed.cache_keys)
    rounds.round_finish(round_id=round_id)


async def _stream(claimed: rounds.ClaimedRound, engine: Runtime) -> None:
    await fan_out(claimed.calls, RoundHooks(claimed), limiter=engine.limiter, client=engine.client)


# How often the partial text of running answers is saved, so a page that (re)connects mid-stream reloads
# nearly all of it over HTTP; one UPDATE per round per interval, whatever the number of answers.
CHECKPOINT_S = 1.0


class RoundHooks:
    """Where the engine's events go for one round.

    A batch round nobody watches (an experiment's page shows progress, not tokens) sends nothing to the channel
    layer and saves no partial text; its answers are written together, in one transaction, when the last one
    is done. An interactive round streams every delta, checkpoints and records each answer as it finishes.
    """

    def __init__(self, claimed: rounds.ClaimedRound):
        self.round_id = claimed.round_id
        self.channel = group_channel(claimed.group_id)
        self.batch = claimed.lane == Lane.BATCH
        self.expected = len(claimed.calls)
        self.finished: list[Result] = []  # a batch round's results not yet written
        self.texts: dict[int, list[str]] = {}
        self.changed: set[int] = set()
        self.checkpointed_at = time.monotonic()

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
        deltas = [{"output": d.key, "offset": d.offset, "text": d.text} for d in batch]
        await abroadcast(self.channel, OUTPUT_DELTAS, deltas=deltas)
        if time.monotonic() - self.checkpointed_at >= CHECKPOINT_S:
            await self._checkpoint()

    async def _checkpoint(self) -> None:
        partial = {key: "".join(self.texts[key]) for key in self.changed}
        self.changed.clear()
        self.checkpointed_at = time.monotonic()
        await database_sync_to_async(rounds.outputs_checkpoint)(texts=partial)

    async def done(self, result: Result) -> None:
        self.changed.discard(result.key)  # the final text is written below; a checkpoint must not follow it
        self.texts.pop(result.key, None)
        if self.batch:
            await self._batch_done(result)
            return
        payload = await database_sync_to_async(rounds.output_record)(result=result)
        if payload is not None:
            await abroadcast(self.channel, "output.done", **payload)

    async def _batch_done(self, result: Result) -> None:
        self.finished.append(result)
        if len(self.finished) < self.expected:
            return
        results, self.finished = self.finished, []
        watched = await alistened(self.channel)
        payloads = await database_sync_to_async(rounds.outputs_record)(results=results, events=watched)
        for payload in payloads:
            await abroadcast(self.channel, "output.done", **payload)

    async def cancelled(self) -> bool:
        if self.batch:
            return await batch_round_stopped(self.round_id)
        return await database_sync_to_async(selectors.round_stopped)(round_id=self.round_id)

    async def waiting(self, key: int, connection: str, ahead: int) -> None:
        # The column says "waiting for connection X — k ahead" until its request is sent.
        send = abroadcast_to_listeners if self.batch else abroadcast
        await send(self.channel, "output.waiting", output=key, connection=connection, ahead=ahead)
