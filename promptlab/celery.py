"""The Celery app: configured from the CELERY dict in Django settings, tasks discovered in every app."""

import os

from celery import Celery, signals

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "promptlab.settings")

app = Celery("promptlab")


@app.on_configure.connect
def _load_django_settings(sender: Celery, **kwargs) -> None:
    from django.conf import settings

    sender.conf.update(settings.CELERY)


app.autodiscover_tasks()


# Start the engine's loop and connections (lab/engine/runtime.py) when a worker starts, in the process that runs
# the tasks, so the first round a worker takes does not pay for them.
@signals.worker_process_init.connect
def _start_engine_in_child(**kwargs) -> None:
    from lab.engine.runtime import runtime

    runtime()


@signals.worker_ready.connect
def _start_engine(sender, **kwargs) -> None:
    from celery.concurrency.prefork import TaskPool as PreforkPool

    from lab.jobs.batch import batch_consumer_attach

    if not isinstance(sender.controller.pool, PreforkPool):  # prefork children run batch jobs on their own loops
        batch_consumer_attach(sender)
