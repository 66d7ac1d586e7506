"""Embedded mode: a Celery worker and beat running as threads inside the web process.

Same tasks, same Celery app, an in-memory broker instead of Redis. Requests never wait for a task: they
enqueue on commit exactly as in services mode and the worker thread picks the message up.
"""

import logging
import tempfile
import threading
from pathlib import Path

from celery import beat

from lab.jobs.batch import batch_consumer_attach
from lab.jobs.lifecycle import worker_start

from .celery import app

logger = logging.getLogger(__name__)
_started = threading.Event()


def start_embedded_worker(concurrency: int = 8) -> None:
    """Start the in-process worker and beat once per process."""
    if _started.is_set():
        return
    _started.set()
    worker = app.WorkController(
        concurrency=concurrency,
        pool_cls="threads",
        hostname="embedded@localhost",
        queues=["interactive", "batch"],  # both lanes (lab.jobs.kinds.Lane)
        without_heartbeat=True,
        without_mingle=True,
        without_gossip=True,
        loglevel="INFO",
    )
    batch_consumer_attach(worker.consumer)  # a full process stops taking batch messages (lab.jobs.batch)
    threading.Thread(target=worker.start, name="embedded-celery-worker", daemon=True).start()
    # A WorkController sends no worker_ready (only `celery worker` does): record the worker here, with its heartbeat.
    worker_start(node=worker.hostname)
    schedule = Path(tempfile.gettempdir()) / "promptlab-embedded-beat"
    # The project's scheduler (promptlab/beat.py), which EmbeddedService does not read from the settings itself.
    beat.EmbeddedService(
        app, thread=True, schedule_filename=str(schedule), scheduler_cls=app.conf.beat_scheduler
    ).start()
    logger.info("Embedded Celery worker and beat started (in-memory broker).")
