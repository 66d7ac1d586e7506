"""Lab pages: accounts and workspace settings."""

from django.contrib.auth import views as auth_views
from django.urls import path
from django.views.decorators.http import require_http_methods, require_POST

from . import views

app_name = "lab"

urlpatterns = [
    # Django's form views treat PUT as POST; a page serves only the methods a browser sends it.
    path(
        "login/",
        require_http_methods(["GET", "HEAD", "POST"])(auth_views.LoginView.as_view(redirect_authenticated_user=True)),
        name="login",
    ),
    path("logout/", require_POST(auth_views.LogoutView.as_view()), name="logout"),
    path("register/", views.register, name="register"),
    path("w/new/", views.workspace_new, name="workspace_new"),
    path("w/<int:pk>/switch/", views.workspace_switch, name="switch"),
    path("w/<int:pk>/settings/", views.workspace_settings, name="settings"),
    path("w/<int:pk>/settings/members/", views.member_add, name="member_add"),
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
