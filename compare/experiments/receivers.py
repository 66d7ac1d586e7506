"""Experiments' answer to compare's round_finished: evaluate the round's answers, and mind the budget."""

from functools import partial

from django.db import transaction

from .models import Experiment
from .services import experiment_budget_enforce
from .tasks import evaluate_experiment_round


def on_round_finished(sender, round_id: int, **kwargs) -> None:
    """Runs inside the finishing transaction: only enqueue and check once it commits (the round is then done)."""
    experiment_id = Experiment.objects.filter(group__rounds=round_id).values_list("pk", flat=True).first()
    if experiment_id is None:
        return
    transaction.on_commit(partial(experiment_budget_enforce, experiment_id=experiment_id))
    if Experiment.objects.filter(pk=experiment_id, evaluations__output__round_id=round_id).exists():
        transaction.on_commit(partial(evaluate_experiment_round.delay, round_id))
