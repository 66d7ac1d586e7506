"""Compare API routes, mounted at /api/v1/ by the project urls."""

from django.urls import path

from . import views

urlpatterns = [
    path("groups/", views.GroupList.as_view(), name="api-groups"),
    path("groups/preview/", views.GroupPreview.as_view(), name="api-group-preview"),
    path("groups/<int:pk>/", views.GroupDetail.as_view(), name="api-group"),
    path("groups/<int:pk>/runs/", views.GroupRuns.as_view(), name="api-group-runs"),
    path("groups/<int:pk>/clone/", views.GroupClone.as_view(), name="api-group-clone"),
    path("rounds/<int:pk>/", views.RoundDetail.as_view(), name="api-round"),
    path("rounds/<int:pk>/cancel/", views.RoundCancel.as_view(), name="api-round-cancel"),
    path("datasets/", views.DatasetList.as_view(), name="api-datasets"),
    path("datasets/<int:pk>/", views.DatasetDetail.as_view(), name="api-dataset"),
]
