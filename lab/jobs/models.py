"""The schema every job kind's model inherits: the abstract `Job` (lifecycle fields, the running-has-deadline
constraint, the sweeper's index) and `JobQuerySet` (`unfinished()`, `transition()`, `overdue()`).

Each kind keeps its own status choices (a round can be cancelled, an evaluation skipped) as long as they include
the two unfinished ones, and builds its transition table with `job_transitions`, so the shared moves are written
once. Constraint and index names carry the model's name (`%(class)s`), which keeps the names the tables had.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime
from typing import ClassVar

from django.db import models
from django.db.models import Q
from django.utils import timezone

QUEUED, RUNNING = "queued", "running"  # the two unfinished statuses every kind's status choices include
UNFINISHED = (QUEUED, RUNNING)


def job_transitions(*, done: Iterable[str], ended: Iterable[str]) -> dict[str, tuple[str, ...]]:
    """The legal moves of a kind: queued → running (a claim); running → each of `done` (only a claimed job
    finishes its work); queued or running → each of `ended` (failed, cancelled, skipped: whoever ends it first)."""
    return {RUNNING: (QUEUED,), **{status: (RUNNING,) for status in done}, **{status: UNFINISHED for status in ended}}


class JobQuerySet(models.QuerySet):
    def unfinished(self) -> JobQuerySet:
        return self.filter(status__in=UNFINISHED)

    def finished(self) -> JobQuerySet:
        return self.exclude(status__in=UNFINISHED)

    def overdue(self, now: datetime | None = None) -> JobQuerySet:
        """Running past their deadline: the worker that held them is gone (the jobs sweeper fails them)."""
        return self.filter(status=RUNNING, deadline__lt=now or timezone.now())

    def transition(self, pk: int, to: str, **fields) -> bool:
        """Move one row to `to` if its current status allows it (the model's `transitions`); False when it did not
        (someone else moved it first). Services change status only this way, with a conditional UPDATE."""
        sources = self.model.transitions[to]
        return self.filter(pk=pk, status__in=sources).update(status=to, **fields) == 1


class Job(models.Model):
    """A row of background work: queued → running (claimed by one worker, with a deadline) → finished.

    Where the kinds used to differ, one rule now holds for all:
    - `enqueued_at` is null until the job's message is first sent, for every kind. An evaluation is created with
      its round and waits for that round to finish before it is sent; a null keeps the sweeper from re-sending it
      early (it re-sends queued rows whose `enqueued_at` is old). A verdict used to default it to "now" on
      creation; its services now set it when they enqueue, which is the same moment.
    - `enqueued_at` is the message's clock, which every re-send moves forward, so it cannot say how long a row has
      waited in all: that is each kind's `JobKind.queued_since` (a round's `created_at`, since a round is queued
      once, when made; a verdict's `requested_at`, since asking again queues it anew; an evaluation's
      `enqueued_at`, as it has no other).
    - Every kind has a transition table (`transitions`, built by `job_transitions`), the evaluation included.
    """

    status = models.CharField(max_length=10, default=QUEUED)  # each kind overrides it with its own choices
    enqueued_at = models.DateTimeField(null=True, blank=True)  # when its message was last sent; null before
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)
    deadline = models.DateTimeField(null=True, blank=True)  # set when claimed; the sweeper fails it after this
    # The worker process that claimed it (a lab.WorkerProcess id, lab/jobs/workers.py); once that worker is gone,
    # the row is taken back. No foreign key: a claim must never fail because that bookkeeping row went missing.
    claimed_by = models.UUIDField(null=True, blank=True)

    transitions: ClassVar[dict[str, tuple[str, ...]]]  # to → the statuses it may come from

    objects = JobQuerySet.as_manager()

    class Meta:
        abstract = True
        # A kind's Meta lists these first (`constraints = [*Job.Meta.constraints, …]`): a child's own Meta
        # replaces its parent's lists rather than adding to them.
        constraints = [
            models.CheckConstraint(
                condition=~Q(status=RUNNING) | Q(deadline__isnull=False), name="%(class)s_running_has_deadline"
            ),
        ]
        indexes = [
            # The sweeper: unfinished rows by deadline (running) and by enqueue time (queued).
            models.Index(
                fields=["status", "deadline", "enqueued_at"],
                name="%(class)s_unfinished",
                condition=Q(status__in=UNFINISHED),
            ),
        ]

    @property
    def is_finished(self) -> bool:
        return self.status not in UNFINISHED
