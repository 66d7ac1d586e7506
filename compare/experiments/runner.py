"""Running a started experiment in this process, for the command line: no worker needed.

The unit of scheduling is the call, not the dataset row. Every round of the run is admitted onto the process's
engine loop (lab.engine.runtime) as the very coroutine a worker runs for a batch round (`round_run`), and the
connections' schedulers decide how many calls go at once, so by default a run keeps every connection it uses at
its limit; `concurrency` (the command's --concurrency) bounds the calls in flight further. A round is claimed
only when its calls may start, so the budget cap can still cancel the rounds after it. The rounds were queued by
`round_start` as usual, so a worker that is running may take some of them first: the claim in the database lets
exactly one of the two run each round, and this process waits for the ones a worker took. Only the calling
thread reads the progress, once every `poll_s`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import math
import time
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings

from lab.catalog import split_model_id
from lab.engine.runtime import Runtime, runtime
from lab.models import Connection

from ..execution import round_run
from ..models import Round
from .evaluation import experiment_round_evaluate
from .models import Experiment
from .selectors import experiment_progress

# Each look is two COUNT queries over the run: at a quarter second they were a large part of a long run's CPU,
# and the command shows its progress line about once a second anyway.
POLL_S = 1.0


@dataclass(frozen=True)
class Progress:
    done: int
    total: int
    elapsed_s: float

    @property
    def rate(self) -> float:
        """Calls finished per second so far."""
        return self.done / self.elapsed_s if self.elapsed_s > 0 else 0.0

    @property
    def left_s(self) -> float | None:
        return (self.total - self.done) / self.rate if self.rate > 0 else None


@dataclass(frozen=True)
class Plan:
    """How much of the run is in flight at once."""

    rounds: int  # rounds claimed and streaming
    calls: int | None  # calls waiting for a slot or streaming; None: as many as the connections' limits let go

    def describe(self) -> str:
        return f"up to {self.calls} calls at once" if self.calls else "each connection at its limit"


def run_plan(experiment: Experiment, concurrency: int | None) -> Plan:
    """Enough rounds at once that every connection the variants use can be at its `max_concurrency` (or that
    `concurrency` calls can be in flight), and no more: a round claimed early could not be cancelled by the budget."""
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
    if concurrency:
        return Plan(rounds=math.ceil(concurrency / variants), calls=concurrency)
    # A connection that is gone fails its calls at once; it needs no room.
    rounds = max((math.ceil(limits.get(name, 1) / count) for name, count in per_connection.items()), default=1)
    return Plan(rounds=rounds, calls=None)


def experiment_run_here(
    *,
    experiment: Experiment,
    concurrency: int | None,
    on_progress: Callable[[Progress], None],
    poll_s: float = POLL_S,
) -> None:
    """Run every round of the experiment's run on the engine loop, reporting progress as it goes."""
    started = time.monotonic()
    round_ids = list(
        Round.objects.filter(group=experiment.group_id, run_id=experiment.run_id)
        .order_by("number")
        .values_list("pk", flat=True)
    )

    def report() -> None:
        counts = experiment_progress(experiment)
        on_progress(Progress(counts["done"], counts["total"], time.monotonic() - started))

    engine = runtime()
    running = engine.submit(_run_rounds(round_ids, run_plan(experiment, concurrency), engine))
    try:
        while True:
            try:
                running.result(timeout=poll_s)  # a crash in a round's coroutine is a bug: let it surface
                break
            except concurrent.futures.TimeoutError:
                report()
    except BaseException:
        running.cancel()  # Ctrl-C: calls stop; the rounds are failed by the sweeper at their deadline
        raise
    # Rounds and evaluations a worker claimed first are finished there: wait for them (a dead worker's are given
    # up on when the task's time limit has passed).
    limit = time.monotonic() + settings.CELERY_TASK_TIME_LIMIT
    while not experiment_progress(experiment)["finished"] and time.monotonic() < limit:
        time.sleep(poll_s)
        report()
    report()


async def _run_rounds(round_ids: list[int], plan: Plan, engine: Runtime) -> None:
    rounds = asyncio.Semaphore(plan.rounds)  # fair: rounds are claimed in their numbers' order
    calls = asyncio.Semaphore(plan.calls) if plan.calls else None

    async def one(round_id: int) -> None:
        async with rounds:
            ran = await round_run(round_id=round_id, engine=engine, calls_in_flight=calls)
        if ran:  # on the engine's job threads, as a worker evaluates (a round a worker ran, it evaluates)
            await engine.in_thread(experiment_round_evaluate, round_id=round_id)

    await asyncio.gather(*(one(round_id) for round_id in round_ids))
