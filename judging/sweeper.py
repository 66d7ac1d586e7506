"""The verdict sweeper: nothing a dead worker or a lost message left behind stays unfinished forever."""

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from functools import partial

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from .models import Verdict, VerdictStatus
from .verdicts import announce

SWEEP_BATCH = 200
WORKER_STOPPED = "The worker stopped before this verdict finished; judge the round again."


@dataclass
class VerdictSweepReport:
    failed: list[int] = field(default_factory=list)
    requeued: list[int] = field(default_factory=list)
    expired: list[int] = field(default_factory=list)


def verdicts_sweep(*, now: datetime | None = None) -> VerdictSweepReport:
    """Fail verdicts whose worker died, give up on ones nobody picked up for long, re-send lost messages."""
    now = now or timezone.now()
    report = VerdictSweepReport()
    for pk in Verdict.objects.stale(now).values_list("pk", flat=True)[:SWEEP_BATCH]:
        if _fail(pk, WORKER_STOPPED, now):
            report.failed.append(pk)
    expiry = now - timedelta(seconds=settings.COMPARE_QUEUE_EXPIRY_S)
    expired_message = (
        f"No worker judged this round within {settings.COMPARE_QUEUE_EXPIRY_S // 60} minutes; is a worker running?"
    )
    queued_too_long = Verdict.objects.filter(status=VerdictStatus.QUEUED, requested_at__lt=expiry)
    for pk in queued_too_long.values_list("pk", flat=True)[:SWEEP_BATCH]:
        if _fail(pk, expired_message, now):
            report.expired.append(pk)
    cutoff = now - timedelta(seconds=settings.COMPARE_REQUEUE_AFTER_S)
    for pk in Verdict.objects.waiting_since(cutoff).values_list("pk", flat=True)[:SWEEP_BATCH]:
        if _requeue(pk, cutoff, now):
            report.requeued.append(pk)
    return report


def _fail(verdict_id: int, error: str, now: datetime) -> bool:
    if not Verdict.objects.transition(verdict_id, VerdictStatus.FAILED, error=error, finished_at=now):
        return False  # it finished (or was re-requested) meanwhile
    announce(Verdict.objects.select_related("round").get(pk=verdict_id))
    return True


@transaction.atomic
def _requeue(verdict_id: int, cutoff: datetime, now: datetime) -> bool:
    # Re-sending is harmless: the task claims the verdict, so a slow first message finds it taken.
    if not Verdict.objects.waiting_since(cutoff).filter(pk=verdict_id).update(enqueued_at=now):
        return False
    from .tasks import judge_verdict  # here, not at the top: the tasks module imports the verdict services

    transaction.on_commit(partial(judge_verdict.delay, verdict_id))
    return True
