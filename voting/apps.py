"""The voting app: votes, win rates, ratings, A/B statistics, reports and leaderboards."""

from django.apps import AppConfig


class VotingConfig(AppConfig):
    name = "voting"
    verbose_name = "Voting"

    def ready(self) -> None:
        # compare cannot import voting (imports only go down the layers), so voting registers its rules there:
        # blind mode's reveal checks, the baseline's paired test, the history's vote figures.
        from compare.blind import register_comparison_reveal_check, register_reveal_check
        from compare.experiments.baseline import register_paired_test
        from compare.page_selectors import register_history_annotations

        from .selectors import everyone_voted, has_voted

        register_reveal_check(has_voted)
        register_comparison_reveal_check(everyone_voted)
        register_paired_test(_baseline_paired_test)
        register_history_annotations(_history_vote_figures)


# The rules below are imported on first use: they bring scipy and statsmodels, two seconds of start-up for every
# process that loads the apps (the experiment command among them), most of which never runs them.


def _baseline_paired_test(*args, **kwargs):
    from .baseline_significance import baseline_paired_test

    return baseline_paired_test(*args, **kwargs)


def _history_vote_figures(*args, **kwargs):
    from .page_selectors import history_vote_figures

    return history_vote_figures(*args, **kwargs)
