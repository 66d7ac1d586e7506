"""Judging's answer to compare's signals: a finished round of a comparison that names a judge gets judged."""

from lab.jobs.enqueue import enqueue_on_commit

from .models import VERDICT_JOB, VerdictStatus
from .services import verdict_for_finished_round


def on_round_finished(sender, round_id: int, **kwargs) -> None:
    """Runs inside compare's transaction: the verdict is created with the round's finish and sent once it commits."""
    verdict = verdict_for_finished_round(round_id=round_id)
    if verdict is not None and verdict.status == VerdictStatus.QUEUED:
        enqueue_on_commit(VERDICT_JOB, verdict.pk)
