"""Voting API routes, mounted at /api/v1/ by the project urls."""

from django.urls import path

from . import prompt_standing_views, report_views, round_rows_views, views

urlpatterns = [
    path("datasets/from-rounds/", round_rows_views.DatasetFromRounds.as_view(), name="api-dataset-from-rounds"),
    path("prompts/<int:pk>/standing/", prompt_standing_views.PromptStanding.as_view(), name="api-prompt-standing"),
    path("rounds/<int:pk>/vote/", views.RoundVote.as_view(), name="api-round-vote"),
    path("groups/<int:pk>/report/", report_views.GroupReport.as_view(), name="api-group-report"),
    path("workspaces/<int:pk>/leaderboard/", report_views.WorkspaceLeaderboard.as_view(), name="api-leaderboard"),
]
