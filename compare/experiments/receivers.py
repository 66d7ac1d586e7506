"""Experiments' answer to compare's round_finished: evaluate the round's answers, and mind the budget."""

from functools import partial

from django.db import transaction
from django.utils import timezone

from lab.jobs.enqueue import enqueue_on_commit

from .jobs import EVALUATION
from .models import Evaluation, EvaluationStatus, Experiment
from .services import experiment_budget_enforce


def on_round_finished(sender, round_id: int, **kwargs) -> None:
    """Runs inside the finishing transaction: only enqueue and check once it commits (the round is then done)."""
    experiment_id = Experiment.objects.filter(group__rounds=round_id).values_list("pk", flat=True).first()
    if experiment_id is None:
        return
    transaction.on_commit(partial(experiment_budget_enforce, experiment_id=experiment_id))
    waiting = Evaluation.objects.filter(output__round_id=round_id, status=EvaluationStatus.QUEUED)
    if waiting.update(enqueued_at=timezone.now()):
        enqueue_on_commit(EVALUATION, round_id)
