"""The lab app: workspaces, roles, provider connections and adapters, the run engine's shared parts."""

from django.apps import AppConfig


class LabConfig(AppConfig):
    name = "lab"
    verbose_name = "Lab"

    def ready(self) -> None:
        from . import gc_tuning
        from .files import receivers  # noqa: F401  (connects: a deleted file's bytes are removed)

        gc_tuning.start_up_done()  # the collector back on after a quiet start-up (manage.py)
