"""Voting API routes, mounted at /api/v1/ by the project urls."""

from django.urls import path

from . import report_views, views

urlpatterns = [
    path("rounds/<int:pk>/vote/", views.RoundVote.as_view(), name="api-round-vote"),
    path("groups/<int:pk>/report/", report_views.GroupReport.as_view(), name="api-group-report"),
    path("workspaces/<int:pk>/leaderboard/", report_views.WorkspaceLeaderboard.as_view(), name="api-leaderboard"),
]
