"""Experiment tasks: thin wrappers that take ids and call the experiment services."""

from celery import shared_task
from django.db import InterfaceError, OperationalError

from . import evaluation


# A redelivered message finds the evaluations claimed and does nothing.
@shared_task(
    name="compare.evaluate_experiment_round",
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=True,
    max_retries=5,
)
def evaluate_experiment_round(round_id: int) -> None:
    evaluation.experiment_round_evaluate(round_id=round_id)
