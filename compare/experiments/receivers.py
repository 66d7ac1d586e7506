"""Experiments' answer to compare's round_finished: evaluate the round's answers, and mind the budget."""

from functools import partial

from django.db import transaction
from django.db.models import Exists
from django.utils import timezone

from lab.jobs.enqueue import enqueue_on_commit

from .jobs import EVALUATION
from .models import Evaluation, EvaluationStatus, Experiment
from .services import experiment_budget_enforce


def on_round_finished(sender, round_id: int, **kwargs) -> None:
    """Runs inside the finishing transaction: only enqueue and check once it commits (the round is then done)."""
    waiting = Evaluation.objects.filter(output__round_id=round_id, status=EvaluationStatus.QUEUED)
    found = (
        Experiment.objects.filter(group__rounds=round_id)
        .annotate(evaluating=Exists(waiting))
        .values_list("pk", "budget", "evaluating")
        .first()
    )
    if found is None:
        return
    experiment_id, budget, evaluating = found
    if budget is not None:  # without a cap there is nothing to enforce: no lock, no sum of the spent per round
        transaction.on_commit(partial(experiment_budget_enforce, experiment_id=experiment_id))
    # An experiment without a judge or a schema has no evaluations: its rounds are finished with the one query.
    if evaluating and waiting.update(enqueued_at=timezone.now()):
        enqueue_on_commit(EVALUATION, round_id)
