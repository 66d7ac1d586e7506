"""Compare tasks: thin wrappers that take ids and call the round and evaluation services.

Nothing imports this module to enqueue: jobs are sent by task name (lab.jobs.enqueue); Celery finds it here.
"""

from celery import shared_task
from django.db import InterfaceError, OperationalError

from lab.jobs.batch import batch_start_sync, queue_of

from .experiments import evaluation
from .experiments.jobs import EVALUATION
from .rounds import dispatch


# A database blip before the claim retries; after the claim a retry finds the round taken, and the jobs sweeper
# finishes whatever was left.
@shared_task(
    name="compare.run_round",
    bind=True,
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=True,
    max_retries=5,
)
def run_round(self, round_id: int) -> None:
    dispatch.round_dispatch(round_id=round_id, queue=queue_of(self))


# A redelivered message finds the evaluations claimed and does nothing.
@shared_task(
    name="compare.evaluate_experiment_round",
    bind=True,
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=True,
    max_retries=5,
)
def evaluate_experiment_round(self, round_id: int) -> None:
    # Batch work: on the engine's job threads, so judges waiting for their connection hold no worker thread.
    batch_start_sync(
        EVALUATION, round_id, evaluation.experiment_round_evaluate, queue=queue_of(self), round_id=round_id
    )
