"""Judging's answer to compare's signals: a finished round of a comparison that names a judge gets judged."""

from lab.jobs.enqueue import enqueue_on_commit

from .models import VERDICT_JOB, VerdictStatus
from .services import verdicts_for_finished_rounds


def on_round_finished(sender, round_ids: list[int], **kwargs) -> None:
    """Runs inside compare's transaction: the verdicts are created with the rounds' finish and sent once it
    commits."""
    for verdict in verdicts_for_finished_rounds(round_ids=round_ids):
        if verdict.status == VerdictStatus.QUEUED:
            enqueue_on_commit(VERDICT_JOB, verdict.pk)
