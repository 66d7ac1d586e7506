"""The Celery app: configured from the CELERY dict in Django settings, tasks discovered in every app."""

import logging
import os

from celery import Celery, signals

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "promptlab.settings")

app = Celery("promptlab")
logger = logging.getLogger(__name__)


# Not config_from_object("django.conf:settings", namespace="CELERY"): the CELERY dict keeps Celery's settings under
# Celery's own names in one block, while the flat CELERY_* settings are our knobs that the dict is built from
# (CELERY_VISIBILITY_TIMEOUT is no Celery setting), which a namespace would hand to Celery as well.
@app.on_configure.connect
def _load_django_settings(sender: Celery, **kwargs) -> None:
    from django.conf import settings

    sender.conf.update(settings.CELERY)


app.autodiscover_tasks()


# Start the engine's loop and connections (lab/engine/runtime.py) when a worker starts, in the process that runs
# the tasks, so the first round a worker takes does not pay for them.
# Then its collector is set for a long-lived process (lab.gc_tuning): a full collection of the start-up heap stopped
# every answer the process was streaming for 100 ms or more.
@signals.worker_process_init.connect
def _start_engine_in_child(**kwargs) -> None:
    from lab import gc_tuning
    from lab.engine.runtime import runtime

    runtime()
    gc_tuning.settle_for_a_long_run()


@signals.worker_ready.connect
def _start_engine(sender, **kwargs) -> None:
    from celery.concurrency.prefork import TaskPool as PreforkPool

    from lab import gc_tuning
    from lab.jobs.batch import batch_consumer_attach

    if not isinstance(sender.controller.pool, PreforkPool):  # prefork children run batch jobs on their own loops
        batch_consumer_attach(sender)
        gc_tuning.settle_for_a_long_run()


# A worker records itself with a heartbeat, so the jobs it claims say who holds them (lab/jobs/workers.py), then
# takes back at once the jobs of the process it replaces and of any other worker that is gone.
# (The embedded worker, which sends no worker_ready, does the same in promptlab/embedded_worker.py.)
@signals.worker_ready.connect
def _register_worker(sender, **kwargs) -> None:
    from lab.jobs.lifecycle import worker_start

    reclaimed = {name: pks for name, pks in worker_start(node=sender.hostname).items() if pks}
    if reclaimed:
        logger.info("Took back the jobs of workers that are gone: %s", reclaimed)


# A warm shutdown (SIGTERM: a deploy, `docker compose stop`) waits for the tasks in flight, but batch jobs run on the
# engine loop after their tasks returned: give them time to finish too, within docker-compose's stop_grace_period.
# What is still running afterwards is taken back by a live worker (or failed at its deadline), like any job of a
# dead worker.
BATCH_DRAIN_S = 45


@signals.worker_shutdown.connect
def _finish_batch_jobs(**kwargs) -> None:
    from lab.engine.runtime import started
    from lab.jobs.workers import worker_stopped

    engine = started()
    if engine is not None and engine.batch.in_flight:
        left = engine.batch.drain(BATCH_DRAIN_S)
        if left:
            logger.warning("Stopping with %s batch jobs unfinished; a live worker takes them back.", left)
    worker_stopped()
