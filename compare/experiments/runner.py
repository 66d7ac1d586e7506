"""Running a started experiment from the command line: no worker needed, in this process or spread over several.

The unit of scheduling is the call, not the dataset row. Rounds run on a process's engine loop (lab.engine.runtime)
as a worker runs batch rounds, but claimed together as room frees up and written together once their calls are done
(compare.rounds.batches). Each connection's `max_concurrency` sets how many of the run's calls on it go at once (its
window, lab.engine.fanout.CallWindows), so by default a run keeps every connection it uses at its limit, each at its
own; `concurrency` (the command's --concurrency) bounds the calls in flight further. Rounds are claimed ahead of
those that fit (twice as many, or MIN_AHEAD more without a budget cap, see CLAIM_AHEAD): their calls wait in the
windows and go the moment others end, so a freed slot is taken at once rather than after the finished round's write
and the next claim; a round is claimed no earlier than that, so the budget cap can still cancel the rounds after it.
In a file on several connections the rounds claimed may all wait for a slower connection's calls while a faster one
has none left: without a budget cap or `concurrency`, more are claimed whenever a connection's window runs short
while another's is not (CallWindows.short; bounded by HELD_CALLS_MAX and BACKLOG_SHARE), so each connection stays at
its own limit until its own calls run out. The rounds were queued by `round_start` without a message to the workers;
the jobs sweeper sends one for a round still queued after JOBS_REQUEUE_AFTER_S, so in a long run a worker that is
running may take some of them: the claim in the database lets exactly one process run each round, and this one waits
for the ones a worker took. Only the calling thread of the first process reads the progress, once every `poll_s`.

With `processes` above 1 the run is shared out (see `share_of`): this process runs the first share and starts a
child process for each other one (compare.experiments.spread), and the run's limits are divided between them.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import math
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

from asgiref.sync import ThreadSensitiveContext
from django.conf import settings

from lab.catalog import split_model_id
from lab.engine.fanout import CallWindows
from lab.engine.queue_deadlines import queue_deadline_s
from lab.engine.runtime import Runtime, runtime
from lab.jobs.kinds import Lane
from lab.models import Connection

from ..models import Round, RoundStatus
from ..rounds.batches import RoundBatches
from . import spread
from .evaluation import experiment_round_evaluate, rounds_evaluating
from .models import Experiment
from .selectors import experiment_progress
from .services import StartedInParts
from .spread import Plan

CLAIM_AHEAD = 2  # rounds claimed per round that fits the calls in flight (see `_run_rounds`)
# Without a budget cap, at least this many rounds are claimed ahead of those that fit, in claims of at least half of
# them: at a limit of 4 a round or two fit, and a claim that small cost more CPU than its calls.
# With a cap, no more than CLAIM_AHEAD: the cap cancels a round not yet claimed whole, while a claimed round's calls
# are refused one by one as they come to reserve (compare.experiments.budget).
MIN_AHEAD = 8
# Beyond those, without a budget cap or --concurrency, rounds are claimed whenever a connection's window runs short
# of calls while another's is not (CallWindows.short): in a file on several connections the rounds claimed may all
# be waiting for a slower connection's calls while a faster one has none left. Each such claim takes `plan.rounds`
# more (the widest connection's window at once), while the calls of the rounds held stay under HELD_CALLS_MAX
# (their memory) and the last call waiting in a window should get its place within BACKLOG_SHARE of the batch queue
# deadline (the rounds' deadlines allow that wait, then their answers' timeouts: the jobs sweeper must not fail a
# round that waits for its turn here).
HELD_CALLS_MAX = 5000
BACKLOG_SHARE = 1 / 4
FIRST_WAVE_S = 1.0  # at most this long the rounds ahead wait for the first claim's calls to go (see `_run_rounds`)
# Each look is two COUNT queries over the run: at a quarter second they were a large part of a long run's CPU,
# and the command shows its progress line about once a second anyway.
POLL_S = 1.0


@dataclass(frozen=True)
class Progress:
    done: int  # calls made and finished
    total: int
    elapsed_s: float
    not_started: int = 0  # calls that will never be made (the budget cap, a cancelled round, nothing to judge)

    @property
    def finished(self) -> bool:
        return self.done + self.not_started >= self.total

    @property
    def rate(self) -> float:
        """Calls finished per second so far."""
        return self.done / self.elapsed_s if self.elapsed_s > 0 else 0.0

    @property
    def left_s(self) -> float | None:
        return (self.total - self.done - self.not_started) / self.rate if self.rate > 0 else None


@dataclass
class Outcome:
    """What the command needs beyond the database: the child processes that stopped before their share was done."""

    stopped: list[spread.Stopped] = field(default_factory=list)


def run_plan(experiment: Experiment, concurrency: int | None, processes: int = 1) -> Plan:
    """The whole run's plan: enough rounds at once that every connection the variants use can be at its
    `max_concurrency` (or that `concurrency` calls can be in flight), and no more: a round claimed early could not
    be cancelled by the budget. More processes than calls or rounds would have nothing to do."""
    per_connection: dict[str, int] = {}
    for model in experiment.group.variants.values_list("model", flat=True):
        name = split_model_id(model)[0]
        per_connection[name] = per_connection.get(name, 0) + 1
    limits = dict(
        Connection.objects.filter(workspace=experiment.group.workspace_id, name__in=per_connection).values_list(
            "name", "max_concurrency"
        )
    )
    variants = max(1, sum(per_connection.values()))
    total = Round.objects.filter(group=experiment.group_id, run_id=experiment.run_id).count()
    processes = max(1, min(processes, concurrency or processes, total or 1))
    if concurrency:
        return Plan(rounds=math.ceil(concurrency / variants), calls=concurrency, processes=processes)
    # A connection that is gone fails its calls at once; it needs no room.
    rounds = max((math.ceil(limits.get(name, 1) / count) for name, count in per_connection.items()), default=1)
    return Plan(rounds=rounds, calls=None, processes=processes)


def run_plans(plan: Plan) -> list[Plan]:
    """One plan per process, whose sums are the run's: `calls` (the command's --concurrency, an upper bound for the
    whole run) and the rounds at once are divided between the processes. The connections' own limits are held
    across processes by the Redis scheduler (lab.engine.limiter); each process's windows take its part of them
    (`_run_rounds`)."""
    n = plan.processes

    def part(total: int, share: int) -> int:
        return total // n + (share < total % n)

    plans = []
    for share in range(n):
        calls = part(plan.calls, share) if plan.calls else None
        rounds = max(1, math.ceil(plan.rounds * calls / plan.calls) if calls else math.ceil(plan.rounds / n))
        plans.append(Plan(rounds=rounds, calls=calls))
    return plans


def share_of(round_ids: list[int], share: int, shares: int) -> list[int]:
    """A process's own rounds: every `shares`-th one in number order, so that together the processes go through the
    run in order (the budget cap cancels the rounds after it), with no two asking for the same round. A process
    that is done with its own takes whatever is still queued (`_RoundFeed`): a slow or dead process's rounds."""
    return round_ids[share::shares]


def spread_refusal() -> str | None:
    """Why this deployment cannot spread a run over processes, or None. Without Redis each process would enforce
    every connection's limits on its own (the in-memory scheduler), so together they would exceed them; SQLite
    takes one writer at a time."""
    if not settings.REDIS_URL:
        return (
            "needs REDIS_URL: the connections' limits are shared between processes through Redis (without it each "
            "process would keep them on its own)."
        )
    if settings.DATABASES["default"]["ENGINE"].endswith("sqlite3"):
        return "needs Postgres (DATABASE_URL): SQLite takes one writer at a time."
    return None


def experiment_run_here(
    *,
    experiment: Experiment,
    concurrency: int | None,
    on_progress: Callable[[Progress], None],
    processes: int = 1,
    debug: bool = False,
    poll_s: float = POLL_S,
    parts: StartedInParts | None = None,
) -> Outcome:
    """Run every round of the experiment's run (spread over `processes`), reporting progress as it goes. A run
    started in parts (`experiment_start_in_parts`, one process) writes its other rounds once its first calls went."""
    if parts is not None and processes > 1:
        raise ValueError("A run started in parts runs in one process: the others would not see its rounds yet.")
    started = time.monotonic()
    round_ids = [round_.pk for round_ in parts.rounds] if parts else _round_ids(experiment)
    plans = run_plans(run_plan(experiment, concurrency, processes))

    def report() -> None:
        counts = experiment_progress(experiment)
        on_progress(Progress(counts["done"], counts["total"], time.monotonic() - started, counts["not_started"]))

    outcome = Outcome()
    children = spread.Children.start(experiment_id=experiment.pk, plans=plans[1:], shares=len(plans), debug=debug)
    engine = runtime()
    mine = share_of(round_ids, 0, len(plans))
    rest = parts.rest if parts else None
    running = engine.submit(_run_rounds(mine, experiment, plans[0], engine, shares=len(plans), rest=rest))
    try:
        while True:
            try:
                running.result(timeout=poll_s)  # a crash in a round's coroutine is a bug: let it surface
                break
            except concurrent.futures.TimeoutError:
                report()
                outcome.stopped += children.stopped()
        # This process took every round still queued: the others finish what they claimed.
        while children.running():
            time.sleep(poll_s)
            report()
            outcome.stopped += children.stopped()
    except BaseException:
        running.cancel()  # Ctrl-C: calls stop; the rounds are failed by the sweeper at their deadline
        children.stop()
        raise
    outcome.stopped += children.stopped()
    if not outcome.stopped:
        # Rounds and evaluations a worker claimed first are finished there: wait for them (a dead worker's are
        # given up on when the task's time limit has passed). A child that stopped will not finish its own.
        limit = time.monotonic() + settings.CELERY_TASK_TIME_LIMIT
        while not experiment_progress(experiment)["finished"] and time.monotonic() < limit:
            time.sleep(poll_s)
            report()
    report()
    return outcome


def experiment_share_run(*, experiment: Experiment, plan: Plan, share: int, shares: int) -> concurrent.futures.Future:
    """A child process's work: its share of the run, then whatever is still queued; started on the engine loop."""
    engine = runtime()
    mine = share_of(_round_ids(experiment), share, shares)
    return engine.submit(_run_rounds(mine, experiment, plan, engine, share=share, shares=shares))


def _round_ids(experiment: Experiment) -> list[int]:
    rounds = Round.objects.filter(group=experiment.group_id, run_id=experiment.run_id)
    return list(rounds.order_by("number").values_list("pk", flat=True))


async def _run_rounds(
    round_ids: list[int],
    experiment: Experiment,
    plan: Plan,
    engine: Runtime,
    *,
    share: int = 0,
    shares: int = 1,
    rest: Callable[[], list[Round]] | None = None,
) -> None:
    """`plan.rounds` rounds at once and as many ahead, taken from the feed in order and claimed together as room
    frees up; each round's answers evaluated where it ran, once it is written. Process `share` of `shares` keeps
    its part of each connection's limit. `rest` writes the run's other rounds (a run started in parts): on a job
    thread once the first claim's calls have gone."""
    async with ThreadSensitiveContext(executor=engine.batch_database):  # as round_run: the batch rounds' thread
        evaluations: set[asyncio.Task] = set()

        async def evaluate(round_ids: list[int]) -> None:
            # On the engine's job threads, as a worker evaluates (a round a worker ran, it evaluates).
            evaluating = await engine.in_thread(rounds_evaluating, round_ids=round_ids)
            await asyncio.gather(*(engine.in_thread(experiment_round_evaluate, round_id=pk) for pk in evaluating))

        def finished(round_ids: list[int]) -> None:
            evaluations.add(asyncio.create_task(evaluate(round_ids)))

        # The calls in flight are bounded by the windows (each connection's limit, and --concurrency), so more
        # rounds than fit may be claimed: those ahead wait there, their calls go the moment others end, and each
        # claim takes half of them at once. Without them a freed slot stayed empty for the finished round's write
        # and the next claim (about 130 ms a wave at 20 calls of 0.69 s). The writes wait for as many
        # (compare.rounds.batches), so that one write frees the room for one claim, for no longer than the rounds
        # ahead hold calls, less one latency for that claim: three latencies at C = 4, none where the rounds ahead
        # are no more than those in flight (from C = 24 with three variants).
        ahead = _ahead(plan, capped=bool(experiment.budget))
        windows = CallWindows(plan.calls, share=share, shares=shares)
        room = _Room(plan.rounds + ahead, claim_at_least=ahead // 2)
        if not experiment.budget and not plan.calls:
            room.beyond = partial(_short_rounds, windows, plan.rounds, queue_deadline_s(Lane.BATCH) * BACKLOG_SHARE)
            windows.on_free = room.changed.set
        batches = RoundBatches(
            engine,
            windows=windows,
            # Without a judge or a schema there is nothing to evaluate: no look for it after every write.
            finished=finished if experiment.evaluates else None,
            gather_rounds=room.claim_at_least,
            gather_latencies=max(0.0, ahead / plan.rounds - 1),
        )
        feed = _RoundFeed(round_ids, experiment, engine, rest)
        running: set[asyncio.Task] = set()
        # The first claim takes only the rounds that fit, and the rounds ahead are claimed once their calls have
        # gone: claiming all of them first put 0.1 s (68 rounds at a limit of 100) before the run's first request,
        # and a claim on the database thread while they went took the loop's turns (70 ms more).
        first = plan.rounds
        try:
            while (free := await room.free()) and (ids := await feed.take(min(free, first or free))):
                for claimed in await batches.claim(ids):
                    windows.expect(claimed.calls)
                    room.take(len(claimed.calls))
                    task = asyncio.create_task(batches.run(claimed))
                    task.add_done_callback(partial(room.give, len(claimed.calls)))
                    running.add(task)
                _raise_failed(running)
                if first:
                    first = 0
                    # Calls waiting for their slot (another process holds it, a rate limit) do not hold the rest.
                    with contextlib.suppress(TimeoutError):
                        async with asyncio.timeout(FIRST_WAVE_S):
                            await batches.sent()
                    feed.write_rest()
            await asyncio.gather(*running)
        except BaseException:
            for task in running:
                task.cancel()  # their rounds stay running: the sweeper fails them at their deadline
            raise
        finally:
            await batches.close()
        await asyncio.gather(*evaluations)


def _ahead(plan: Plan, *, capped: bool) -> int:
    return max(plan.rounds * (CLAIM_AHEAD - 1), 0 if capped else MIN_AHEAD)


def rounds_at_start(plan: Plan) -> int:
    """How many rounds a run without a budget cap claims before its first calls end (those that fit and those
    ahead): the first part of a run started in parts, so that the others are written while those calls go."""
    return plan.rounds + _ahead(plan, capped=False)


def _raise_failed(tasks: set[asyncio.Task]) -> None:
    """A crash in a round's coroutine is a bug: let it surface at once (the other rounds go on until then)."""
    for task in [task for task in tasks if task.done()]:
        tasks.discard(task)
        task.result()


class _Room:
    """How many more rounds may be claimed: `size` at once, a place given back when a round is written, and claimed
    once at least `claim_at_least` places are free (all of them at the start). `beyond`, if set, says how many may
    be claimed over `size` now, given the calls the rounds claimed hold (see `_short_rounds`)."""

    def __init__(self, size: int, claim_at_least: int = 1):
        self.size, self.used, self.calls = size, 0, 0
        self.claim_at_least = max(1, min(claim_at_least, size))
        self.changed = asyncio.Event()
        self.beyond: Callable[[int], int] | None = None

    async def free(self) -> int:
        while True:
            if self.size - self.used >= self.claim_at_least:
                return self.size - self.used
            if self.beyond is not None and (more := self.beyond(self.calls)):
                return more
            self.changed.clear()
            await self.changed.wait()

    def take(self, calls: int = 0) -> None:
        self.used += 1
        self.calls += calls

    def give(self, calls: int = 0, _task: asyncio.Task | None = None) -> None:
        self.used -= 1
        self.calls -= calls
        self.changed.set()


def _short_rounds(windows: CallWindows, rounds: int, backlog_max_s: float, held_calls: int) -> int:
    """Rounds to claim beyond the room because a connection's window is short of calls (see HELD_CALLS_MAX): none
    while every window has its calls, while the rounds held already hold HELD_CALLS_MAX calls, or while the last
    call waiting in a window would wait more than `backlog_max_s`."""
    if held_calls >= HELD_CALLS_MAX or not windows.short() or windows.backlog_s() > backlog_max_s:
        return 0
    return rounds


class _RoundFeed:
    """A process's rounds in order: its own share, then (a run started in parts) the rounds `rest` writes, then the
    run's rounds still queued that it has not yet tried (another process's not yet claimed: a slow one's, or a dead
    one's), asked again until none is left. A round someone else claimed first costs one failed claim."""

    def __init__(
        self,
        round_ids: list[int],
        experiment: Experiment,
        engine: Runtime,
        rest: Callable[[], list[Round]] | None = None,
    ):
        self.pending = deque(round_ids)
        self.engine = engine
        self.tried: set[int] = set()
        self.experiment = experiment
        self.exhausted = False
        self.refilling = asyncio.Lock()
        self.rest, self.rest_written = rest, None

    def write_rest(self) -> None:
        """Start writing the run's other rounds (once; at the latest when the rounds so far have all been taken)."""
        if self.rest is not None and self.rest_written is None:
            self.rest_written = asyncio.ensure_future(self.engine.in_thread(self.rest))

    async def take(self, count: int) -> list[int]:
        """Up to `count` rounds not yet tried, in order; none when the run has none left."""
        while not self.pending:
            async with self.refilling:
                if self.exhausted:
                    return []
                if self.rest is not None:
                    self.write_rest()
                    self.pending.extend(round_.pk for round_ in await self.rest_written)
                    self.rest = None
                    continue
                if not self.pending:
                    queued = await self.engine.in_thread(self._queued)
                    self.pending.extend(queued)
                    self.exhausted = not queued
        taken = [self.pending.popleft() for _ in range(min(count, len(self.pending)))]
        self.tried.update(taken)
        return taken

    def _queued(self) -> list[int]:
        rounds = Round.objects.filter(
            group=self.experiment.group_id, run_id=self.experiment.run_id, status=RoundStatus.QUEUED
        )
        return [pk for pk in rounds.order_by("number").values_list("pk", flat=True) if pk not in self.tried]
