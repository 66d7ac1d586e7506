"""The lifecycle every job kind shares: claim with a deadline, and the sweep that bounds every unfinished row.

Nothing of any kind stays `running` past its deadline (the sweeper fails it with the kind's readable reason) or
`queued` forever (a message that seems lost is sent again after COMPARE_REQUEUE_AFTER_S; a row no worker took
within COMPARE_QUEUE_EXPIRY_S is failed and says so).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from .enqueue import enqueue_on_commit
from .kinds import QUEUED, RUNNING, JobKind, registered

SWEEP_BATCH = 500  # rows of each sort per kind per pass; the next pass takes the rest


def job_deadline(time_limit_s: float, *, now: datetime | None = None) -> datetime:
    """When a job claimed now, allowed `time_limit_s` of work, is given up on: the limit plus the grace to write
    its results."""
    return (now or timezone.now()) + timedelta(seconds=time_limit_s + settings.COMPARE_ROUND_GRACE_S)


def job_time_limit_s() -> float:
    """How long one verdict or one round's evaluations may take (rounds get their variants' own timeouts)."""
    return float(settings.CELERY_TASK_SOFT_TIME_LIMIT)


def job_claim(job: JobKind, pk: int, *, deadline: datetime, **fields: Any) -> bool:
    """Take a queued row for this worker (queued → running); False when someone else has it or it finished."""
    now = timezone.now()
    claimed = job.model.objects.filter(pk=pk, status=QUEUED).update(
        status=RUNNING, started_at=now, deadline=deadline, **fields
    )
    return claimed == 1


@dataclass
class SweepReport:
    failed: list[int] = field(default_factory=list)  # running past their deadline: the worker is gone
    requeued: list[Any] = field(default_factory=list)  # message keys sent again: the message may have been lost
    expired: list[int] = field(default_factory=list)  # queued so long that no worker is coming

    def __bool__(self) -> bool:
        return bool(self.failed or self.requeued or self.expired)


def job_sweep(job: JobKind, *, now: datetime | None = None) -> SweepReport:
    """One pass over one kind's unfinished rows."""
    now = now or timezone.now()
    rows = job.model.objects
    report = SweepReport()
    overdue = rows.filter(status=RUNNING, deadline__lt=now).values_list("pk", flat=True)[:SWEEP_BATCH]
    report.failed = [pk for pk in overdue if job.fail(pk, job.worker_stopped)]
    minutes = settings.COMPARE_QUEUE_EXPIRY_S // 60
    expired_error = f"No worker started this {job.noun} within {minutes} minutes; is a worker running?"
    expiry = now - timedelta(seconds=settings.COMPARE_QUEUE_EXPIRY_S)
    stale = rows.filter(status=QUEUED, **{f"{job.queued_since}__lt": expiry}).values_list("pk", flat=True)
    report.expired = [pk for pk in stale[:SWEEP_BATCH] if job.fail(pk, expired_error)]
    cutoff = now - timedelta(seconds=settings.COMPARE_REQUEUE_AFTER_S)
    lost = rows.filter(status=QUEUED, enqueued_at__lt=cutoff).values_list(job.message_key, flat=True).distinct()
    report.requeued = [key for key in lost[:SWEEP_BATCH] if _requeue(job, key, cutoff, now)]
    return report


def jobs_sweep(*, now: datetime | None = None) -> dict[str, SweepReport]:
    """Every registered kind, one after the other (the beat task)."""
    return {job.name: job_sweep(job, now=now) for job in registered()}


@transaction.atomic
def _requeue(job: JobKind, key: Any, cutoff: datetime, now: datetime) -> bool:
    # Re-sending is harmless: if the first message was only slow, whichever arrives second finds the row taken.
    waiting = job.model.objects.filter(**{job.message_key: key}, status=QUEUED, enqueued_at__lt=cutoff)
    if not waiting.update(enqueued_at=now):
        return False
    enqueue_on_commit(job.name, key)
    return True
