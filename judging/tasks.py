"""Judging tasks: thin wrappers that take ids and call the verdict and assertion-grading services."""

from celery import shared_task
from django.db import InterfaceError, OperationalError

from . import assertion_grading, verdicts


# A database blip before the claim retries; after the claim a retry finds the verdict taken.
@shared_task(
    name="judging.judge_verdict", autoretry_for=(OperationalError, InterfaceError), retry_backoff=True, max_retries=5
)
def judge_verdict(verdict_id: int) -> None:
    verdicts.verdict_execute(verdict_id=verdict_id)


@shared_task(
    name="judging.grade_assertions",
    autoretry_for=(OperationalError, InterfaceError),
    retry_backoff=True,
    max_retries=5,
)
def grade_assertions(grading_id: int) -> None:
    assertion_grading.assertion_grading_execute(grading_id=grading_id)
