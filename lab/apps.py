"""The lab app: workspaces, roles, provider connections and adapters, the run engine's shared parts."""

from django.apps import AppConfig


class LabConfig(AppConfig):
    name = "lab"
    verbose_name = "Lab"
