"""Voting API routes, mounted at /api/v1/ by the project urls."""

from django.urls import path

from . import inbox_views, prompt_standing_views, report_views, round_rows_views, views, voter_views

urlpatterns = [
    path("datasets/from-rounds/", round_rows_views.DatasetFromRounds.as_view(), name="api-dataset-from-rounds"),
    path("prompts/<int:pk>/standing/", prompt_standing_views.PromptStanding.as_view(), name="api-prompt-standing"),
    path("rounds/<int:pk>/vote/", views.RoundVote.as_view(), name="api-round-vote"),
    path("groups/<int:pk>/report/", report_views.GroupReport.as_view(), name="api-group-report"),
    path("workspaces/<int:pk>/leaderboard/", report_views.WorkspaceLeaderboard.as_view(), name="api-leaderboard"),
    path("workspaces/<int:pk>/inbox/next/", inbox_views.InboxNext.as_view(), name="api-inbox-next"),
    path("workspaces/<int:pk>/inbox/skip/", inbox_views.InboxSkip.as_view(), name="api-inbox-skip"),
    path("workspaces/<int:pk>/inbox/undo/", inbox_views.InboxUndo.as_view(), name="api-inbox-undo"),
    path("workspaces/<int:pk>/voters/", voter_views.VoterQuality.as_view(), name="api-voter-quality"),
    path(
        "workspaces/<int:pk>/voters/<int:user_id>/exclusion/",
        voter_views.VoterExclusion.as_view(),
        name="api-voter-exclusion",
    ),
]
