"""Lab pages: accounts (allauth's views at the lab's old addresses), workspace settings, invitations, API tokens
and the audit log. allauth's other pages (password reset, e-mail, providers) are under /accounts/."""

from allauth.account import views as account_views
from django.urls import path
from django.views.decorators.http import require_http_methods

from . import views
from .audit import views as audit_views
from .invitations import views as invitation_views
from .tokens import views as token_views

app_name = "lab"

urlpatterns = [
    # A page serves only the methods a browser sends it (allauth's form views would treat PUT as POST).
    path("login/", require_http_methods(["GET", "HEAD", "POST"])(account_views.login), name="login"),
    path("logout/", require_http_methods(["GET", "HEAD", "POST"])(account_views.logout), name="logout"),
    path("register/", require_http_methods(["GET", "HEAD", "POST"])(account_views.signup), name="register"),
    path("settings/tokens/", token_views.token_list, name="tokens"),
    path("settings/tokens/<int:token_id>/revoke/", token_views.token_revoke, name="token_revoke"),
    path("invite/<str:key>/", invitation_views.invitation_open, name="invitation"),
    path("w/new/", views.workspace_new, name="workspace_new"),
    path("w/<int:pk>/switch/", views.workspace_switch, name="switch"),
    path("w/<int:pk>/settings/", views.workspace_settings, name="settings"),
    path("w/<int:pk>/settings/members/", views.member_add, name="member_add"),
    path("w/<int:pk>/settings/members/<int:user_id>/", views.member_change, name="member_change"),
    path("w/<int:pk>/settings/invitations/", invitation_views.invitation_new, name="invitation_new"),
    path(
        "w/<int:pk>/settings/invitations/<int:invitation_id>/revoke/",
        invitation_views.invitation_remove,
        name="invitation_revoke",
    ),
    path("w/<int:pk>/audit/", audit_views.audit_log, name="audit"),
    path("w/<int:pk>/audit.csv", audit_views.audit_csv, name="audit_csv"),
    path("w/<int:pk>/settings/connections/", views.connection_add, name="connection_add"),
    path(
        "w/<int:pk>/settings/connections/<int:connection_id>/refresh-models/",
        views.connection_refresh_models,
        name="connection_refresh_models",
    ),
    path(
        "w/<int:pk>/settings/connections/<int:connection_id>/remove/",
        views.connection_remove,
        name="connection_remove",
    ),
]
