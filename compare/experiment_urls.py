"""Experiment and dataset pages, added to compare's URLs (namespace `compare`)."""

from django.urls import path, reverse

from . import dataset_views, experiment_views

urlpatterns = [
    path("w/<int:pk>/experiments/", experiment_views.experiment_list, name="experiments"),
    path("w/<int:pk>/experiments/new/", experiment_views.experiment_new, name="experiment_new"),
    path("w/<int:pk>/experiments/estimate/", experiment_views.experiment_estimate, name="experiment_estimate"),
    path("w/<int:pk>/experiments/run/", experiment_views.experiment_run, name="experiment_run"),
    path("compare/<int:pk>/experiment/", experiment_views.experiment_detail, name="experiment"),
    path("compare/<int:pk>/experiment/status/", experiment_views.experiment_status, name="experiment_status"),
    path("compare/<int:pk>/export/", experiment_views.experiment_export, name="experiment_export"),
    path("w/<int:pk>/datasets/", dataset_views.dataset_list, name="datasets"),
    path("w/<int:pk>/datasets/preview/", dataset_views.dataset_preview, name="dataset_preview"),
    path("w/<int:pk>/datasets/import/", dataset_views.dataset_import, name="dataset_import"),
    path("datasets/<int:pk>/", dataset_views.dataset_detail, name="dataset"),
    path("datasets/<int:pk>/rename/", dataset_views.dataset_rename, name="dataset_rename"),
    path("datasets/<int:pk>/delete/", dataset_views.dataset_delete, name="dataset_delete"),
    path("datasets/<int:pk>/rows/", dataset_views.dataset_row_add, name="dataset_row_add"),
    path("datasets/<int:pk>/rows/<int:position>/", dataset_views.dataset_row_save, name="dataset_row_save"),
    path("datasets/<int:pk>/rows/<int:position>/delete/", dataset_views.dataset_row_delete, name="dataset_row_delete"),
]


def experiment_page_path(pk: int) -> str:
    """The experiment page's path, from these patterns alone: what the experiment command prints after a run,
    without loading every app's URLs and views (two seconds, most of it statistics libraries). compare's URLs sit
    at the site's root (promptlab/urls.py); a test holds this equal to `reverse("compare:experiment")`."""
    return reverse("experiment", urlconf=__name__, args=[pk])
