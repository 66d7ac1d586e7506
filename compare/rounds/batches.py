"""Many batch rounds on one loop for one caller (the experiment command, or a worker process: compare.rounds.dispatch),
claimed together and finished together.

Run one by one, every batch round costs a claim and a finish of a few queries each, and its finish sends the
round_finished signal, whose receivers ask a query or two more: with three calls a round that was most of a
call's CPU. Here the rounds a caller has room for are claimed in one transaction (`worker.rounds_claim`), and the
rounds whose calls are all done are written in one transaction, answers and finish together
(`worker.rounds_complete`). While one claim or write is on the database thread, the rounds that become ready
meanwhile make up the next one, so batches grow with the load. A write also waits a little for the rounds about
to finish: an eighth of the latest ready round's slowest call, at most GATHER_MAX_S. Rounds started together end a few
milliseconds apart, and at 20 calls at once with 0.69 s answers they were written one at a time, five writes a
wave: the wait took the command's CPU per call from 6.6 to 5.1 ms (medians of three runs). It is bounded by the
latency so that it stays short against the rounds claimed ahead (runner.CLAIM_AHEAD), which keep the calls going
meanwhile; a fixed quarter second starved them at 0.1 s answers.

A caller with rounds claimed ahead of its calls (the experiment command) may ask for writes of
`gather_rounds` rounds: a write first waits until that many are ready, until no other round is still making calls,
or `gather_latencies` times the latest round's slowest call (at most GATHER_AHEAD_MAX_S), whichever comes first;
then the short wait above. The rounds ahead keep the calls going meanwhile, as long as `gather_rounds` is at most
half of them and the wait is shorter than the calls they hold (the caller says how many latencies that is). At 4
calls at once with 0.69 s answers a round finished every half second and nearly every write carried one round:
writes were a fifth of the command's CPU. At 200 at once the rounds ahead hold one wave of calls: a first try
that waited 2 s there grew the span (1.21 against 1.16 × ideal), most likely as rounds left waiting for the next
wave's took the room its claims needed.

Each round still streams on its own, within its own time limit (`execution.round_stream`), and is failed on its
own. A process that dies between a round's last answer and the write leaves it running: the jobs sweeper fails it
at its deadline, as for any round.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from channels.db import database_sync_to_async

from lab.engine.fanout import CallWindows, Result
from lab.events import OUTPUT_DONE
from lab.realtime import abroadcast, alistened, group_channel

from . import worker
from .execution import RoundHooks, round_stream

# About the most answers one write takes (a round is never split): each is a row of 14 values in the statement,
# and Postgres takes at most 65,535 parameters a statement.
MAX_WRITE_ANSWERS = 2000
GATHER_SHARE = 1 / 8  # of the last call's latency: how long a write waits for more rounds to finish
GATHER_MAX_S = 0.1
# With rounds claimed ahead: the longest a ready round waits for `gather_rounds` others, whatever the latency. The
# progress line and the evaluations see an answer at most this late.
GATHER_AHEAD_MAX_S = 2.0

_Ready = tuple[worker.ClaimedRound, list[Result], asyncio.Future]  # a round, its results, and its write to come


class RoundBatches:
    """Claims, runs and writes batch rounds for one caller on the engine's loop. Its database work goes through
    the calling context's thread (the batch rounds' own, see `execution.round_run`); `finished` is called with the
    ids of each batch of rounds once they are written (on the loop: it must not block). With `gather_rounds` above
    one a write waits for that many ready rounds (see the module's docstring)."""

    def __init__(
        self,
        engine,
        *,
        windows: CallWindows | None = None,
        finished: Callable[[list[int]], None] | None = None,
        gather_rounds: int = 1,
        gather_latencies: float = 0.0,
        shorten_deadlines: bool = False,
        outlive_failed_writes: bool = False,
    ):
        self.engine = engine
        self.windows = windows
        self.finished = finished
        # A worker's rounds have their deadlines shortened once their calls are sent (execution.RoundHooks), as
        # when it ran them one by one; the command's keep their claim's.
        self.shorten_deadlines = shorten_deadlines
        # A worker lives on after a failed write (its rounds are left to the sweeper, as a failed finish was); the
        # command stops.
        self.outlive_failed_writes = outlive_failed_writes
        self.gather_rounds, self.gather_latencies = gather_rounds, gather_latencies
        self._calling = 0  # rounds whose calls are not all done
        self._unsent = 0  # calls of the rounds claimed through `claim`, neither sent nor ended unsent
        self._counted: set[int] = set()  # those rounds, until they run (a worker claims its rounds itself)
        self._all_sent = asyncio.Event()
        self._all_sent.set()
        if windows is not None:
            windows.on_wait = self._check_sent
        self._ready: list[_Ready] = []
        self._wake = asyncio.Event()
        self._closing = False
        self._writer = asyncio.create_task(self._write_ready())

    async def claim(self, round_ids: list[int]) -> list[worker.ClaimedRound]:
        """Those of the rounds still queued, claimed together (in the order given)."""
        claimed = await database_sync_to_async(worker.rounds_claim)(round_ids=round_ids)
        self._unsent += sum(len(one.calls) for one in claimed)
        self._counted.update(one.round_id for one in claimed)
        if self._unsent:
            self._all_sent.clear()
        return claimed

    async def sent(self) -> None:
        """Until every call of the rounds claimed so far has been sent, has ended unsent, or waits for a place at a
        connection whose places are all taken (in a file on several connections the first claim's calls for the
        narrower one wait there until its earlier calls end: the rounds ahead waited for them, and a wider
        connection's window stayed empty after its first wave)."""
        await self._all_sent.wait()

    def _gone(self) -> None:
        self._unsent -= 1
        self._check_sent()

    def _check_sent(self) -> None:
        # The calls waiting in the windows are among those unsent (the caller's windows hold only its claims' calls).
        if self._unsent <= (self.windows.waiting() if self.windows is not None else 0):
            self._all_sent.set()

    async def run(self, claimed: worker.ClaimedRound) -> None:
        """Make the round's calls, then wait until its answers are written with the next batch (a failed write
        raises here), so that a caller's rounds in flight are the rounds not yet finished in the database."""
        # The command writes its rounds in batches; a round it leaves behind keeps its claim's deadline.
        counted = claimed.round_id in self._counted
        self._counted.discard(claimed.round_id)
        hooks = RoundHooks(claimed, shorten_deadline=self.shorten_deadlines, on_gone=self._gone if counted else None)
        self._calling += 1
        try:
            results = await round_stream(claimed, self.engine, hooks, self.windows)
        finally:
            self._calling -= 1
            self._wake.set()  # the writer may be waiting for this round, or for no round to be calling
        if results is None:
            return
        if self._writer.done():  # it failed (or was closed): nobody would write these answers
            self._writer.result()
            raise RuntimeError("The round batches were closed while a round was running.")
        written = asyncio.get_running_loop().create_future()
        self._ready.append((claimed, results, written))
        self._wake.set()
        await written

    async def close(self) -> None:
        """Write what is ready and stop; a failed write raises here."""
        self._closing = True
        self._wake.set()
        await self._writer

    async def _write_ready(self) -> None:
        while True:
            await self._wake.wait()
            if not self._closing:
                await self._gather()
                if self._calling and (gather_s := _gather_s(self._ready)):
                    await asyncio.sleep(gather_s)  # the rounds about to finish join this write
            self._wake.clear()
            while self._ready:
                taken = self._take_ready()
                batch = [(claimed, results) for claimed, results, _ in taken]
                try:
                    await self._write(batch)
                except Exception as exc:
                    _tell(taken, exc)
                    if not self.outlive_failed_writes:
                        raise  # the rounds stay running; the sweeper fails them at their deadline
                    continue
                _tell(taken, None)
            if self._closing:
                return

    async def _gather(self) -> None:
        """Wait for `gather_rounds` ready rounds while others are still calling, at most `gather_latencies` of the
        latest call's latency and GATHER_AHEAD_MAX_S (no wait for one)."""
        loop = asyncio.get_running_loop()
        deadline = loop.time() + min(GATHER_AHEAD_MAX_S, self.gather_latencies * _latency_s(self._ready))
        while self._ready and len(self._ready) < self.gather_rounds and self._calling and not self._closing:
            self._wake.clear()
            try:
                async with asyncio.timeout_at(deadline):
                    await self._wake.wait()
            except TimeoutError:
                return

    def _take_ready(self) -> list[_Ready]:
        answers = count = 0
        while count < len(self._ready) and (count == 0 or answers + len(self._ready[count][1]) <= MAX_WRITE_ANSWERS):
            answers += len(self._ready[count][1])
            count += 1
        taken, self._ready = self._ready[:count], self._ready[count:]
        return taken

    async def _write(self, batch: list[tuple[worker.ClaimedRound, list[Result]]]) -> None:
        channels = {group_channel(claimed.group_id) for claimed, _ in batch}
        watched = [channel for channel in sorted(channels) if await alistened(channel)]
        cache_keys: dict[int, dict[int, str]] = {}
        checks: dict[int, worker.AnswerCheck] = {}
        for claimed, _ in batch:
            if claimed.cache_keys:
                cache_keys.setdefault(claimed.workspace_id, {}).update(claimed.cache_keys)
            checks.update(claimed.checks)
        payloads = await database_sync_to_async(worker.rounds_complete)(
            results=[result for _, results in batch for result in results],
            round_ids=[claimed.round_id for claimed, _ in batch],
            events=bool(watched),
            cache_keys=cache_keys,
            checks=checks,
        )
        channel_of = {claimed.round_id: group_channel(claimed.group_id) for claimed, _ in batch}
        for payload in payloads:
            if channel_of[payload["round"]] in watched:
                await abroadcast(channel_of[payload["round"]], OUTPUT_DONE, **payload)
        if self.finished is not None:
            self.finished([claimed.round_id for claimed, _ in batch])


def _gather_s(ready: list[_Ready]) -> float:
    """How long a write waits for the rounds about to finish: GATHER_SHARE of the latest round's slowest call, at
    most GATHER_MAX_S."""
    return min(GATHER_MAX_S, GATHER_SHARE * _latency_s(ready))


def _latency_s(ready: list[_Ready]) -> float:
    """The latest ready round's slowest call, in seconds (0 when nothing is ready or no call was timed)."""
    if not ready:
        return 0.0
    latencies = [result.answer.latency_ms for result in ready[-1][1] if result.answer.latency_ms is not None]
    return max(latencies) / 1000 if latencies else 0.0


def _tell(taken: list[_Ready], error: Exception | None) -> None:
    """Tell each round's coroutine how its write went, unless it was cancelled meanwhile (its future is done)."""
    for _, _, written in taken:
        if written.done():
            continue
        if error is None:
            written.set_result(None)
        else:
            written.set_exception(error)
