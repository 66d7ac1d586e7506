"""Lab tasks: thin wrappers that load by id and call a service."""

import logging

from celery import shared_task

from . import services
from .audit import services as audit_services
from .events import WORKER_PONG, worker_pong
from .jobs.lifecycle import jobs_sweep
from .realtime import broadcast, workspace_channel

logger = logging.getLogger(__name__)


@shared_task(name="lab.worker_check")
def worker_check(workspace_id: int) -> None:
    """Health check from the settings page: proves worker → database → websocket all work."""
    services.workspace_mark_worker_seen(workspace_id=workspace_id)
    broadcast(workspace_channel(workspace_id), WORKER_PONG, **worker_pong(workspace=workspace_id))


@shared_task(name="lab.audit_prune")
def audit_prune() -> int:
    """Daily (beat): drop audit entries older than AUDIT_RETENTION_DAYS."""
    return audit_services.audit_prune()


@shared_task(name="lab.sweep_jobs")
def sweep_jobs() -> None:
    """Every job kind's sweep (beat runs it in its own process every JOBS_SWEEP_INTERVAL_S: promptlab/beat.py)."""
    for name, report in jobs_sweep().items():
        if report:
            logger.info(
                "Sweep of %ss: failed %s, taken back %s, re-enqueued %s, expired %s",
                name,
                report.failed,
                report.reclaimed,
                report.requeued,
                report.expired,
            )
