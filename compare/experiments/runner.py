"""Running a started experiment in this process, for the command line: no worker needed.

Each round (one dataset row, every combination at once) is run by `round_execute`, the very code the Celery task
runs, in a pool of `concurrency` threads; the thread then evaluates the round's answers. The rounds were queued by
`round_start` as usual, so a worker that is running may take some of them first: the claim in the database lets
exactly one of the two run each round, and this process waits for the ones a worker took.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import connections
from django.utils import timezone

from ..execution import round_execute
from ..models import Round
from .evaluation import experiment_round_evaluate
from .models import Experiment
from .selectors import experiment_progress

POLL_S = 0.25
# Connections this process needs besides the round threads': the caller's and the engine's database thread.
OWN_CONNECTIONS = 2


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


def usable_concurrency(requested: int) -> int:
    """As many rounds at once as asked, but no more than the database pool serves (each round thread holds a
    connection while its answers stream); SQLite has no pool."""
    pool = settings.DATABASES["default"].get("OPTIONS", {}).get("pool")
    if not isinstance(pool, dict) or "max_size" not in pool:
        return requested
    return max(1, min(requested, pool["max_size"] - OWN_CONNECTIONS))


def experiment_run_here(
    *, experiment: Experiment, concurrency: int, on_progress: Callable[[Progress], None], poll_s: float = POLL_S
) -> None:
    """Run every round of the experiment's run, `concurrency` rounds at a time, reporting progress as it goes."""
    started = time.monotonic()
    rounds = list(
        Round.objects.filter(group=experiment.group_id, run_id=experiment.run_id)
        .order_by("number")
        .values_list("pk", flat=True)
    )

    def report() -> None:
        counts = experiment_progress(experiment)
        on_progress(Progress(counts["done"], counts["total"], time.monotonic() - started))

    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="experiment") as pool:
        pending = {pool.submit(_run_round, round_id) for round_id in rounds}
        while pending:
            finished, pending = wait(pending, timeout=poll_s, return_when=FIRST_COMPLETED)
            for future in finished:
                future.result()  # a crash in a round's thread is a bug: let it surface
            report()
    # Evaluations a worker claimed first are finished there: wait for them (a dead worker's are given up on when
    # the task's time limit has passed).
    limit = time.monotonic() + settings.CELERY_TASK_TIME_LIMIT
    while not experiment_progress(experiment)["finished"] and time.monotonic() < limit:
        time.sleep(poll_s)
        report()
    report()


def _run_round(round_id: int) -> None:
    try:
        round_execute(round_id=round_id)  # returns at once if a worker claimed it, or the budget cancelled it
        _wait_until_finished(round_id)
        experiment_round_evaluate(round_id=round_id)
    finally:
        connections.close_all()  # this thread's connection, before the pool reuses or ends the thread


def _wait_until_finished(round_id: int) -> None:
    """A round a worker took: wait for it, up to its deadline and the sweeper's grace (the sweeper fails it then)."""
    limit = timezone.now() + timedelta(seconds=settings.CELERY_TASK_TIME_LIMIT)
    while timezone.now() < limit:
        round_ = Round.objects.filter(pk=round_id).only("status", "deadline").first()
        if round_ is None or round_.is_finished:
            return
        if round_.deadline is not None:
            limit = min(limit, round_.deadline + timedelta(seconds=settings.COMPARE_SWEEP_INTERVAL_S))
        time.sleep(POLL_S)
