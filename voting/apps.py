"""The voting app: votes, win rates, ratings, A/B statistics, reports and leaderboards."""

from django.apps import AppConfig


class VotingConfig(AppConfig):
    name = "voting"
    verbose_name = "Voting"

    def ready(self) -> None:
        # compare cannot import voting (imports only go down the layers), so voting registers its rules there:
        # blind mode's reveal check, the baseline's paired test, the history's vote figures.
        from compare.blind import register_reveal_check
        from compare.experiments.baseline import register_paired_test
        from compare.page_selectors import register_history_annotations

        from .baseline_test import baseline_paired_test
        from .page_selectors import history_vote_figures
        from .selectors import has_voted

        register_reveal_check(has_voted)
        register_paired_test(baseline_paired_test)
        register_history_annotations(history_vote_figures)
