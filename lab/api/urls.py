"""Lab API routes, mounted at /api/v1/ by the project urls next to the other apps' routes."""

from django.urls import path

from . import audit, auth, invitations, tokens, views

urlpatterns = [
    path("auth/token/", auth.ObtainToken.as_view(), name="api-token"),
    path("workspaces/", views.WorkspaceList.as_view(), name="api-workspaces"),
    path("workspaces/<int:pk>/", views.WorkspaceDetail.as_view(), name="api-workspace"),
    path("tokens/", tokens.TokenList.as_view(), name="api-tokens"),
    path("tokens/<int:token_id>/", tokens.TokenDetail.as_view(), name="api-token-detail"),
    path("workspaces/<int:pk>/members/", views.MemberList.as_view(), name="api-members"),
    path("workspaces/<int:pk>/members/<int:user_id>/", views.MemberDetail.as_view(), name="api-member"),
    path("workspaces/<int:pk>/audit/", audit.AuditList.as_view(), name="api-audit"),
    path("workspaces/<int:pk>/invitations/", invitations.InvitationList.as_view(), name="api-invitations"),
    path(
        "workspaces/<int:pk>/invitations/<int:invitation_id>/",
        invitations.InvitationDetail.as_view(),
        name="api-invitation",
    ),
    path("workspaces/<int:pk>/connections/", views.ConnectionList.as_view(), name="api-connections"),
    path(
        "workspaces/<int:pk>/connections/<int:connection_id>/",
        views.ConnectionDetail.as_view(),
        name="api-connection",
    ),
    path(
        "workspaces/<int:pk>/connections/<int:connection_id>/refresh-models/",
        views.ConnectionModelsRefresh.as_view(),
        name="api-connection-refresh-models",
    ),
    path("workspaces/<int:pk>/models/", views.ModelList.as_view(), name="api-models"),
    path("workspaces/<int:pk>/worker-check/", views.WorkerCheck.as_view(), name="api-worker-check"),
]
