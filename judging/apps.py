"""The judging app: judge configurations, judge runs and verdicts (LLM-as-judge)."""

from django.apps import AppConfig


class JudgingConfig(AppConfig):
    name = "judging"
    verbose_name = "Judging"

    def ready(self) -> None:
        # compare cannot import judging (imports only go down the layers), so it sends a signal and judging listens.
        # For the same reason, experiments find their judge through the scorer registered here (compare/hooks.py).
        from compare.hooks import assertions_pending, register_assertion_grader, register_scorer, round_finished

        from .assertion_grading import assertion_gradings_run_here, on_assertions_pending
        from .experiment_scoring import PointwiseScorer
        from .jobs import register_kinds
        from .receivers import on_round_finished

        register_kinds()
        round_finished.connect(on_round_finished, dispatch_uid="judging.on_round_finished")
        register_scorer(PointwiseScorer())
        register_assertion_grader(assertion_gradings_run_here)
        assertions_pending.connect(on_assertions_pending, dispatch_uid="judging.on_assertions_pending")
