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
    found = Experiment.objects.filter(group__rounds=round_id).values_list("pk", "budget").first()
    if found is None:
        return
    experiment_id, budget = found
    if budget is not None:  # without a cap there is nothing to enforce: no lock, no sum of the spent per round
        transaction.on_commit(partial(experiment_budget_enforce, experiment_id=experiment_id))
    waiting = Evaluation.objects.filter(output__round_id=round_id, status=EvaluationStatus.QUEUED)
    if waiting.update(enqueued_at=timezone.now()):
        enqueue_on_commit(EVALUATION, round_id)
