"""The one enqueue-on-commit path: a job's message is sent by task name once its transaction commits.

A send that fails (the broker is down at commit) never raises into the request or task that committed: the row
stays queued and is marked as sent long ago, so the sweeper's next pass (every JOBS_SWEEP_INTERVAL_S) sends
it again; once the broker is back, the job starts within one sweep interval.
"""

from __future__ import annotations

import logging
from datetime import timedelta
from functools import partial
from typing import Any

from celery import current_app
from django.conf import settings
from django.db import transaction
from django.utils import timezone

from .kinds import kind
from .models import QUEUED

logger = logging.getLogger(__name__)


def enqueue_on_commit(kind_name: str, key: Any, *, queue: str | None = None) -> None:
    """Send the job's message after the current transaction commits (at once outside one); nothing if it rolls back.

    A caller that knows the job's lane passes it as `queue`, which spares the send a query for it."""
    transaction.on_commit(partial(send, kind_name, key, queue=queue))


def send(kind_name: str, key: Any, *, countdown: float | None = None, queue: str | None = None) -> bool:
    """Send one message now (to its lane's queue unless `queue` is given, to be run `countdown` seconds from now if
    given); False (logged, and left for the sweeper) when the broker refused it."""
    job = kind(kind_name)
    try:
        current_app.send_task(job.task, args=(key,), queue=queue or job.lane_of(key), countdown=countdown)
    except Exception:
        logger.warning("Could not enqueue %s %s; the sweeper will send it again.", job.noun, key, exc_info=True)
        long_ago = timezone.now() - timedelta(seconds=settings.JOBS_REQUEUE_AFTER_S)
        job.model.objects.filter(**{job.message_key: key}, status=QUEUED).update(enqueued_at=long_ago)
        return False
    return True
