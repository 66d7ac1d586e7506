"""The voting app: votes, win rates, ratings, A/B statistics, reports and leaderboards."""

from django.apps import AppConfig


class VotingConfig(AppConfig):
    name = "voting"
    verbose_name = "Voting"
