"""Top-level URLs: each app's pages and API routes, the schema and docs, and the admin."""

from django.contrib import admin
from django.urls import include, path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from compare import views as compare_views

from . import views

urlpatterns = [
    path("", views.home, name="home"),
    # A workspace's home page is its history of comparisons.
    path("w/<int:pk>/", compare_views.history, name="workspace_home"),
    path("favicon.ico", views.favicon),
    path("admin/", admin.site.urls),
    # allauth's pages (password reset, e-mail verification, identity providers) keep their own URL names.
    path("accounts/", include("allauth.urls")),
    path("api/v1/", include("lab.api.urls")),
    path("api/v1/", include("judging.api.urls")),
    path("api/v1/", include("compare.api.urls")),
    path("api/v1/", include("voting.api.urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    # The split view serves its start-up script as a file: the Content-Security-Policy allows no inline script.
    # The split view serves its start-up script as a file: the Content-Security-Policy allows no inline script.
    path(
        "api/docs/",
        SpectacularSwaggerSplitView.as_view(url_name="schema", template_name="api/swagger_ui.html"),
        name="api-docs",
    ),
    path("", include("lab.urls")),
    path("", include("compare.urls")),
    path("", include("voting.urls")),
    path("", include("judging.urls")),
]

handler404 = "promptlab.views.not_found"
