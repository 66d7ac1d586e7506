"""Which worker process claimed which job: one row per process, kept fresh by a heartbeat thread.

A Celery worker registers when it is ready (promptlab/celery.py) and writes a heartbeat every JOBS_HEARTBEAT_S;
each job it claims records it (`claimed_by`). A worker is gone once its heartbeat is older than
JOBS_WORKER_LOST_AFTER_S, once it stopped, or once a later process of the same Celery node started (a restart):
the jobs it had claimed are then taken back and sent again (lab.jobs.lifecycle.jobs_reclaim). A process that never
registered (the experiment command, a prefork child) claims with no worker recorded; its jobs end at their deadline.
"""

from __future__ import annotations

import logging
import os
import threading
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.db import DatabaseError, close_old_connections, transaction
from django.db.models import Case, F, Max, Q, QuerySet, Value, When
from django.utils import timezone

from lab.models import WorkerProcess

logger = logging.getLogger(__name__)

FORGET_AFTER = timedelta(days=1)  # rows of workers gone this long are deleted by the sweep

_me: uuid.UUID | None = None  # this process's row, once it registered
_stopping = threading.Event()


def claimant() -> uuid.UUID | None:
    """The worker a job claimed in this process is recorded as claimed by (None: not a registered worker)."""
    return _me


@transaction.atomic
def worker_register(*, node: str) -> uuid.UUID:
    """Record this process as the worker of `node`, start its heartbeat, and return its id. Earlier processes of
    the same node are gone from now on: Celery runs one process per node name, so this one replaces them."""
    global _me
    now = timezone.now()
    WorkerProcess.objects.filter(node=node, stopped_at__isnull=True).update(stopped_at=now)
    _me = WorkerProcess.objects.create(node=node, pid=os.getpid(), started_at=now, seen_at=now).pk
    _stopping.clear()
    threading.Thread(target=_heartbeat, args=(_me, node), name="jobs-heartbeat", daemon=True).start()
    return _me


def worker_stopped() -> None:
    """This worker stops (a warm shutdown, after its jobs drained): what it still holds is taken back at once."""
    _stopping.set()
    if _me is not None:
        WorkerProcess.objects.filter(pk=_me).update(stopped_at=timezone.now())


def _heartbeat(pk: uuid.UUID, node: str) -> None:
    while not _stopping.wait(settings.JOBS_HEARTBEAT_S):
        try:
            _beat(pk, node)
        except DatabaseError:
            logger.warning("Could not write the worker heartbeat; trying again.", exc_info=True)
        finally:
            close_old_connections()  # the pool takes the connection back between beats


def _beat(pk: uuid.UUID, node: str) -> None:
    now = timezone.now()
    after_a_gap = When(seen_at__lt=_lost_before(now), then=Value(now))
    if not WorkerProcess.objects.filter(pk=pk).update(
        seen_at=now, beating_since=Case(after_a_gap, default=F("beating_since"))
    ):
        # Its row went missing (deleted by hand, a database restored): this worker is alive, so it says so again.
        WorkerProcess.objects.create(id=pk, node=node, pid=os.getpid(), started_at=now, seen_at=now)


def _lost_before(now: datetime) -> datetime:
    return now - timedelta(seconds=settings.JOBS_WORKER_LOST_AFTER_S)


def workers_gone(*, now: datetime | None = None) -> QuerySet:
    """The ids of workers that are gone: stopped, replaced, or silent for JOBS_WORKER_LOST_AFTER_S while another
    worker beat all that time. Without such a witness (after a database outage every worker was silent) silence
    proves nothing yet: the living beat again within that time."""
    lost = _lost_before(now or timezone.now())
    gone = Q(stopped_at__isnull=False)
    witness = WorkerProcess.objects.filter(stopped_at__isnull=True, seen_at__gte=lost, beating_since__lte=lost)
    if witness.exists():
        gone |= Q(seen_at__lt=lost)
    return WorkerProcess.objects.filter(gone).values("pk")


def worker_alive(*, now: datetime | None = None) -> bool:
    """Whether any worker's heartbeat is fresh."""
    now = now or timezone.now()
    return WorkerProcess.objects.filter(stopped_at__isnull=True, seen_at__gte=_lost_before(now)).exists()


@dataclass(frozen=True)
class WorkerStatus:
    alive: bool
    last_seen: datetime | None  # the latest heartbeat of any worker; None: no worker ever ran


def worker_status(*, now: datetime | None = None, checked_at: datetime | None = None) -> WorkerStatus:
    """Whether a worker runs, and when one was last heard from (what a page says when none does): its latest
    heartbeat, or `checked_at` (a workspace's last answered "Check the worker") where that is newer."""
    heard = [WorkerProcess.objects.aggregate(last=Max("seen_at"))["last"], checked_at]
    return WorkerStatus(alive=worker_alive(now=now), last_seen=max((t for t in heard if t), default=None))


def workers_forget(*, now: datetime | None = None) -> int:
    """Delete the rows of workers gone for FORGET_AFTER (their jobs ended long ago), but the one last seen, which
    says when a worker last ran; how many."""
    old = (now or timezone.now()) - FORGET_AFTER
    latest = WorkerProcess.objects.order_by("-seen_at").values("pk")[:1]
    return WorkerProcess.objects.filter(seen_at__lt=old).exclude(pk__in=latest).delete()[0]
