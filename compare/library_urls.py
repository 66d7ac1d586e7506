"""Prompt library and baseline pages, added to compare's URLs (namespace `compare`)."""

from django.urls import path

from . import baseline_views, prompt_views

urlpatterns = [
    path("w/<int:pk>/prompts/", prompt_views.prompt_list, name="prompts"),
    path("w/<int:pk>/prompts/new/", prompt_views.prompt_new_page, name="prompt_new"),
    path("w/<int:pk>/prompts/import/", prompt_views.library_import_page, name="prompt_import"),
    path("w/<int:pk>/prompts/export/", prompt_views.library_export_page, name="prompt_export"),
    path("prompts/<int:pk>/", prompt_views.prompt_detail, name="prompt"),
    path("prompts/<int:pk>/versions/", prompt_views.version_add, name="prompt_version_add"),
    path("prompt-versions/<int:pk>/promote/", prompt_views.version_promote, name="prompt_promote"),
    path("compare/<int:pk>/save-to-library/", prompt_views.variant_save_page, name="variant_save"),
    path("compare/<int:pk>/rounds/<int:number>/diff/", prompt_views.answer_diff, name="answer_diff"),
    path("compare/<int:pk>/experiment/baseline/", baseline_views.baseline_page, name="experiment_baseline"),
    path("compare/<int:pk>/experiment/baseline/choose/", baseline_views.baseline_choose, name="baseline_choose"),
    path("compare/<int:pk>/experiment/baseline/pin/", baseline_views.baseline_pin_page, name="baseline_pin"),
]
