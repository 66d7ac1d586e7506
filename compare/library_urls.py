"""Prompt library and baseline pages, added to compare's URLs (namespace `compare`)."""

from django.urls import path

from . import baseline_views, prompt_pages

urlpatterns = [
    path("w/<int:pk>/prompts/", prompt_pages.prompt_list, name="prompts"),
    path("w/<int:pk>/prompts/import/", prompt_pages.library_import_page, name="prompt_import"),
    path("w/<int:pk>/prompts/export/", prompt_pages.library_export_page, name="prompt_export"),
    path("prompts/<int:pk>/", prompt_pages.prompt_detail, name="prompt"),
    path("prompts/<int:pk>/versions/", prompt_pages.version_add, name="prompt_version_add"),
    path("prompt-versions/<int:pk>/promote/", prompt_pages.version_promote, name="prompt_promote"),
    path("compare/<int:pk>/save-to-library/", prompt_pages.variant_save_page, name="variant_save"),
    path("compare/<int:pk>/rounds/<int:number>/diff/", prompt_pages.answer_diff, name="answer_diff"),
    path("compare/<int:pk>/experiment/baseline/", baseline_views.baseline_page, name="experiment_baseline"),
    path("compare/<int:pk>/experiment/baseline/choose/", baseline_views.baseline_choose, name="baseline_choose"),
    path("compare/<int:pk>/experiment/baseline/pin/", baseline_views.baseline_pin_page, name="baseline_pin"),
]
