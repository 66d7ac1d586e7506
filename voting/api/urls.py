"""Voting API routes, mounted at /api/v1/ by the project urls."""

from django.urls import path

from . import conversation_votes, inbox, prompt_standing, reports, round_rows, voters, votes

urlpatterns = [
    path("datasets/from-rounds/", round_rows.DatasetFromRounds.as_view(), name="api-dataset-from-rounds"),
    path("prompts/<int:pk>/standing/", prompt_standing.PromptStanding.as_view(), name="api-prompt-standing"),
    path("rounds/<int:pk>/vote/", votes.RoundVote.as_view(), name="api-round-vote"),
    path(
        "rounds/<int:pk>/conversation-vote/",
        conversation_votes.ConversationVoteView.as_view(),
        name="api-round-conversation-vote",
    ),
    path("groups/<int:pk>/report/", reports.GroupReport.as_view(), name="api-group-report"),
    path("workspaces/<int:pk>/leaderboard/", reports.WorkspaceLeaderboard.as_view(), name="api-leaderboard"),
    path("workspaces/<int:pk>/inbox/next/", inbox.InboxNext.as_view(), name="api-inbox-next"),
    path("workspaces/<int:pk>/inbox/skip/", inbox.InboxSkip.as_view(), name="api-inbox-skip"),
    path("workspaces/<int:pk>/inbox/undo/", inbox.InboxUndo.as_view(), name="api-inbox-undo"),
    path("workspaces/<int:pk>/voters/", voters.VoterQuality.as_view(), name="api-voter-quality"),
    path(
        "workspaces/<int:pk>/voters/<int:user_id>/exclusion/",
        voters.VoterExclusion.as_view(),
        name="api-voter-exclusion",
    ),
]
