"""The lifecycle every job kind shares: claim with a deadline, take back a dead worker's jobs, and the sweep that
bounds every unfinished row.

A claim records the worker that made it (lab.jobs.workers). A job whose worker is gone goes back to queued and is
sent again, so a live worker runs it: a worker that starts does this at once, and the sweep does it whenever some
worker is alive. Nothing of any kind stays `running` past its deadline (the sweep fails it with the kind's
readable reason, with or without a worker alive: beat runs it itself) or `queued` forever (a message that seems
lost is sent again after JOBS_REQUEUE_AFTER_S; a row no worker took within JOBS_QUEUE_EXPIRY_S is failed and
says so).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from .enqueue import enqueue_on_commit
from .kinds import JobKind, registered
from .models import QUEUED, RUNNING
from .workers import claimant, worker_alive, worker_register, workers_forget, workers_gone

SWEEP_BATCH = 500  # rows of each sort per kind per pass; the next pass takes the rest


def job_deadline(time_limit_s: float, *, now: datetime | None = None) -> datetime:
    """When a job claimed now, allowed `time_limit_s` of work, is given up on: the limit plus the grace to write
    its results."""
    return (now or timezone.now()) + timedelta(seconds=time_limit_s + settings.JOBS_GRACE_S)


def job_time_limit_s() -> float:
    """How long one verdict or one round's evaluations may take (rounds get their variants' own timeouts)."""
    return float(settings.CELERY_TASK_SOFT_TIME_LIMIT)


def job_claim(job: JobKind, pk: int, *, deadline: datetime, **fields: Any) -> bool:
    """Take a queued row for this worker (queued → running); False when someone else has it or it finished."""
    return job.model.objects.transition(
        pk, RUNNING, started_at=timezone.now(), deadline=deadline, claimed_by=claimant(), **fields
    )


@dataclass
class SweepReport:
    failed: list[int] = field(default_factory=list)  # running past their deadline: the worker is gone
    requeued: list[Any] = field(default_factory=list)  # message keys sent again: the message may have been lost
    expired: list[int] = field(default_factory=list)  # queued so long that no worker is coming
    reclaimed: list[int] = field(default_factory=list)  # taken back from a worker that is gone, and sent again

    def __bool__(self) -> bool:
        return bool(self.failed or self.requeued or self.expired or self.reclaimed)


def job_sweep(job: JobKind, *, now: datetime | None = None) -> SweepReport:
    """One pass over one kind's unfinished rows."""
    now = now or timezone.now()
    rows = job.model.objects
    report = SweepReport()
    overdue = rows.overdue(now).values_list("pk", flat=True)[:SWEEP_BATCH]
    report.failed = [pk for pk in overdue if job.fail(pk, job.worker_stopped)]
    if worker_alive(now=now):  # with none, taking jobs back would only leave them queued: their deadline ends them
        report.reclaimed = job_reclaim(job, now=now)
    minutes = settings.JOBS_QUEUE_EXPIRY_S // 60
    expired_error = f"No worker started this {job.noun} within {minutes} minutes; is a worker running?"
    expiry = now - timedelta(seconds=settings.JOBS_QUEUE_EXPIRY_S)
    stale = rows.filter(status=QUEUED, **{f"{job.queued_since}__lt": expiry}).values_list("pk", flat=True)
    report.expired = [pk for pk in stale[:SWEEP_BATCH] if job.fail(pk, expired_error)]
    cutoff = now - timedelta(seconds=settings.JOBS_REQUEUE_AFTER_S)
    lost = rows.filter(status=QUEUED, enqueued_at__lt=cutoff).values_list(job.message_key, flat=True).distinct()
    report.requeued = [key for key in lost[:SWEEP_BATCH] if _requeue(job, key, cutoff, now)]
    return report


def jobs_sweep(*, now: datetime | None = None) -> dict[str, SweepReport]:
    """Every registered kind, one after the other (the beat task)."""
    reports = {job.name: job_sweep(job, now=now) for job in registered()}
    workers_forget(now=now)
    return reports


def worker_start(*, node: str) -> dict[str, list[int]]:
    """A worker process is ready (a Celery worker, the embedded one): record it with its heartbeat, then take back
    the jobs of workers that are gone, its node's previous process first of all. The pks taken back, by kind."""
    worker_register(node=node)
    return jobs_reclaim()


def jobs_reclaim(*, now: datetime | None = None) -> dict[str, list[int]]:
    """Take back every kind's jobs claimed by workers that are gone (a worker that starts calls this)."""
    return {job.name: job_reclaim(job, now=now) for job in registered()}


def job_reclaim(job: JobKind, *, now: datetime | None = None) -> list[int]:
    """Put the running rows of a worker that is gone back to queued and send them again: a live worker runs them
    (a round keeps the answers it had stored). The pks taken back."""
    now = now or timezone.now()
    orphans = job.model.objects.filter(status=RUNNING, claimed_by__in=workers_gone(now=now))
    return [pk for pk in orphans.values_list("pk", flat=True)[:SWEEP_BATCH] if _reclaim(job, pk, now)]


@transaction.atomic
def _reclaim(job: JobKind, pk: int, now: datetime) -> bool:
    rows = job.model.objects.filter(pk=pk, status=RUNNING, claimed_by__in=workers_gone(now=now))
    key = rows.values_list(job.message_key, flat=True).first()
    if key is None or not rows.update(status=QUEUED, deadline=None, claimed_by=None, enqueued_at=now):
        return False
    if job.on_reclaim is not None:
        job.on_reclaim(pk)
    enqueue_on_commit(job.name, key)
    return True


@transaction.atomic
def _requeue(job: JobKind, key: Any, cutoff: datetime, now: datetime) -> bool:
    # Re-sending is harmless: if the first message was only slow, whichever arrives second finds the row taken.
    waiting = job.model.objects.filter(**{job.message_key: key}, status=QUEUED, enqueued_at__lt=cutoff)
    if not waiting.update(enqueued_at=now):
        return False
    enqueue_on_commit(job.name, key)
    return True
