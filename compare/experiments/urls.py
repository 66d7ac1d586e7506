"""Experiment pages and an experiment run's baseline pages, added to compare's URLs (namespace `compare`)."""

from django.urls import path, reverse

from . import baseline_views, views

urlpatterns = [
    path("w/<int:pk>/experiments/", views.experiment_list, name="experiments"),
    path("w/<int:pk>/experiments/new/", views.experiment_new, name="experiment_new"),
    path("w/<int:pk>/experiments/estimate/", views.experiment_estimate, name="experiment_estimate"),
    path("w/<int:pk>/experiments/run/", views.experiment_run, name="experiment_run"),
    path("compare/<int:pk>/experiment/", views.experiment_detail, name="experiment"),
    path("compare/<int:pk>/experiment/status/", views.experiment_status, name="experiment_status"),
    path("compare/<int:pk>/export/", views.experiment_export, name="experiment_export"),
    path("compare/<int:pk>/experiment/baseline/", baseline_views.baseline_page, name="experiment_baseline"),
    path("compare/<int:pk>/experiment/baseline/choose/", baseline_views.baseline_choose, name="baseline_choose"),
    path("compare/<int:pk>/experiment/baseline/pin/", baseline_views.baseline_pin_page, name="baseline_pin"),
]


def experiment_page_path(pk: int) -> str:
    """The experiment page's path, from these patterns alone: what the experiment command prints after a run,
    without loading every app's URLs and views (two seconds, most of it statistics libraries). compare's URLs sit
    at the site's root (promptlab/urls.py); a test holds this equal to `reverse("compare:experiment")`."""
    return reverse("experiment", urlconf=__name__, args=[pk])
