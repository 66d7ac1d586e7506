"""Lab API routes, mounted at /api/v1/ by the project urls next to the other apps' routes."""

from django.urls import path

from . import audit, auth, connections, files, invitations, tokens, workspaces

urlpatterns = [
    path("auth/token/", auth.ObtainToken.as_view(), name="api-token"),
    path("workspaces/", workspaces.WorkspaceList.as_view(), name="api-workspaces"),
    path("workspaces/<int:pk>/", workspaces.WorkspaceDetail.as_view(), name="api-workspace"),
    path("tokens/", tokens.TokenList.as_view(), name="api-tokens"),
    path("tokens/<int:token_id>/", tokens.TokenDetail.as_view(), name="api-token-detail"),
    path("workspaces/<int:pk>/members/", workspaces.MemberList.as_view(), name="api-members"),
    path("workspaces/<int:pk>/members/<int:user_id>/", workspaces.MemberDetail.as_view(), name="api-member"),
    path("workspaces/<int:pk>/audit/", audit.AuditList.as_view(), name="api-audit"),
    path("workspaces/<int:pk>/invitations/", invitations.InvitationList.as_view(), name="api-invitations"),
    path(
        "workspaces/<int:pk>/invitations/<int:invitation_id>/",
        invitations.InvitationDetail.as_view(),
        name="api-invitation",
    ),
    path("workspaces/<int:pk>/connections/", connections.ConnectionList.as_view(), name="api-connections"),
    path(
        "workspaces/<int:pk>/connections/<int:connection_id>/",
        connections.ConnectionDetail.as_view(),
        name="api-connection",
    ),
    path(
        "workspaces/<int:pk>/connections/<int:connection_id>/refresh-models/",
        connections.ConnectionModelsRefresh.as_view(),
        name="api-connection-refresh-models",
    ),
    path("workspaces/<int:pk>/files/", files.FileList.as_view(), name="api-files"),
    path("files/<int:file_id>/", files.FileDetail.as_view(), name="api-file"),
    path("workspaces/<int:pk>/models/", connections.ModelList.as_view(), name="api-models"),
    path("workspaces/<int:pk>/worker-check/", connections.WorkerCheck.as_view(), name="api-worker-check"),
]
