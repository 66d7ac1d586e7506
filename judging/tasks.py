"""Judging tasks: thin wrappers that take ids and call the verdict services."""

import logging

from celery import shared_task
from django.db import InterfaceError, OperationalError

from . import sweeper, verdicts

logger = logging.getLogger(__name__)


# A database blip before the claim retries; after the claim a retry finds the verdict taken.
@shared_task(
    name="judging.judge_verdict", autoretry_for=(OperationalError, InterfaceError), retry_backoff=True, max_retries=5
)
def judge_verdict(verdict_id: int) -> None:
    verdicts.verdict_execute(verdict_id=verdict_id)


@shared_task(
    name="judging.judge_finished_round",
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=True,
    max_retries=5,
)
def judge_finished_round(round_id: int) -> None:
    verdicts.verdict_for_finished_round_execute(round_id=round_id)


@shared_task(name="judging.sweep")
def sweep() -> None:
    report = sweeper.verdicts_sweep()
    if report.failed or report.requeued or report.expired:
        logger.info(
            "Verdict sweep: failed %s, re-enqueued %s, expired %s", report.failed, report.requeued, report.expired
        )
