"""The compare app: comparisons (groups), variants, rounds, outputs, datasets and experiments."""

from django.apps import AppConfig


class CompareConfig(AppConfig):
    name = "compare"
    verbose_name = "Compare"

    def ready(self) -> None:
        # Experiments evaluate a round's answers and check their budget when it finishes (and register their task).
        from .experiments.receivers import on_round_finished
        from .signals import round_finished

        round_finished.connect(on_round_finished, dispatch_uid="compare.experiments.on_round_finished")
