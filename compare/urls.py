"""Comparison pages and their partials; the workspace history is mounted as `workspace_home` by the project."""

from django.urls import path

from . import views
from .datasets.urls import urlpatterns as dataset_urlpatterns
from .experiments.urls import urlpatterns as experiment_urlpatterns
from .prompts.urls import urlpatterns as library_urlpatterns

app_name = "compare"

urlpatterns = [
    path("w/<int:pk>/compare/new/", views.editor_new, name="new"),
    path("w/<int:pk>/compare/save/", views.editor_save, name="save"),
    path("w/<int:pk>/compare/check/", views.editor_check, name="check"),
    path("compare/<int:pk>/", views.detail, name="detail"),
    path("compare/<int:pk>/edit/", views.editor_clone, name="clone"),
    path("compare/<int:pk>/reveal/", views.reveal, name="reveal"),
    path("compare/<int:pk>/rounds/<int:number>/", views.detail, name="round"),
    path("compare/<int:pk>/rounds/<int:number>/partial/", views.round_partial, name="round_partial"),
]

urlpatterns += experiment_urlpatterns + dataset_urlpatterns + library_urlpatterns
