"""Judging's answer to compare's signals: a finished round of a comparison that names a judge gets judged."""

from functools import partial

from django.db import transaction

from .models import GroupJudge
from .tasks import judge_finished_round


def on_round_finished(sender, round_id: int, **kwargs) -> None:
    """Runs inside compare's transaction: only enqueue, and only once it commits (the round is then done)."""
    if GroupJudge.objects.filter(group__rounds=round_id).exists():
        transaction.on_commit(partial(judge_finished_round.delay, round_id))
