"""Compare tasks: thin wrappers that take ids and call the round services."""

import logging

from celery import shared_task
from django.db import InterfaceError, OperationalError

from . import execution, rounds

logger = logging.getLogger(__name__)


# A database blip before the claim retries; after the claim a retry finds the round taken, and the sweeper
# finishes whatever was left.
@shared_task(
    name="compare.run_round", autoretry_for=(OperationalError, InterfaceError), retry_backoff=True, max_retries=5
)
def run_round(round_id: int) -> None:
    execution.round_execute(round_id=round_id)


@shared_task(name="compare.sweep")
def sweep() -> None:
    report = rounds.rounds_sweep()
    if report.failed or report.requeued or report.expired:
        logger.info("Sweep: failed %s, re-enqueued %s, expired %s", report.failed, report.requeued, report.expired)
