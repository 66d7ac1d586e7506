"""The Celery app: configured from the CELERY dict in Django settings, tasks discovered in every app."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "promptlab.settings")

app = Celery("promptlab")


@app.on_configure.connect
def _load_django_settings(sender: Celery, **kwargs) -> None:
    from django.conf import settings

    sender.conf.update(settings.CELERY)


app.autodiscover_tasks()
