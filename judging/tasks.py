"""Judging tasks: thin wrappers that take ids and call the verdict services."""

from celery import shared_task
from django.db import InterfaceError, OperationalError

from . import verdicts


# A database blip before the claim retries; after the claim a retry finds the verdict taken.
@shared_task(
    name="judging.judge_verdict", autoretry_for=(OperationalError, InterfaceError), retry_backoff=True, max_retries=5
)
def judge_verdict(verdict_id: int) -> None:
    verdicts.verdict_execute(verdict_id=verdict_id)
