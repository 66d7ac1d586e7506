"""The compare app: comparisons (groups), variants, rounds, outputs, datasets and experiments."""

from django.apps import AppConfig


class CompareConfig(AppConfig):
    name = "compare"
    verbose_name = "Compare"

    def ready(self) -> None:
        # Rounds and evaluations are jobs of lab.jobs; experiments evaluate a round's answers and check their budget
        # when it finishes.
        from .assertions.services import on_round_finished as grade_on_round_finished
        from .experiments import jobs as experiment_jobs
        from .experiments.receivers import on_round_finished
        from .hooks import round_finished
        from .rounds.jobs import register_kinds

        register_kinds()
        experiment_jobs.register_kinds()
        round_finished.connect(on_round_finished, dispatch_uid="compare.experiments.on_round_finished")
        # Assertions grade each finished answer from what is stored (compare/assertions/services.py).
        round_finished.connect(grade_on_round_finished, dispatch_uid="compare.assertions.on_round_finished")
