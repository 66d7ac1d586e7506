"""The voting app: votes, win rates, ratings, A/B statistics, reports and leaderboards."""

from django.apps import AppConfig


class VotingConfig(AppConfig):
    name = "voting"
    verbose_name = "Voting"

    def ready(self) -> None:
        # compare cannot import voting (imports only go down the layers), so voting registers its rules there:
        # blind mode's reveal checks and the history's vote figures.
        from compare.hooks import register_comparison_reveal_check, register_history_annotations, register_reveal_check

        from .selectors import everyone_voted, has_voted

        register_reveal_check(has_voted)
        register_comparison_reveal_check(everyone_voted)
        register_history_annotations(_history_vote_figures)


# Imported on first use: voting's page selectors bring scipy and statsmodels, two seconds of start-up for every
# process that loads the apps (the experiment command among them), most of which never shows the history.


def _history_vote_figures(*args, **kwargs):
    from .page_selectors import history_vote_figures

    return history_vote_figures(*args, **kwargs)
