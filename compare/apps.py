"""The compare app: comparisons (groups), variants, rounds, outputs, datasets and experiments."""

from django.apps import AppConfig


class CompareConfig(AppConfig):
    name = "compare"
    verbose_name = "Compare"
