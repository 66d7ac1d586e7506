"""The judging app: judge configurations, judge runs and verdicts (LLM-as-judge)."""

from django.apps import AppConfig


class JudgingConfig(AppConfig):
    name = "judging"
    verbose_name = "Judging"
