"""Prompt library pages, added to compare's URLs (namespace `compare`)."""

from django.urls import path

from . import views

urlpatterns = [
    path("w/<int:pk>/prompts/", views.prompt_list, name="prompts"),
    path("w/<int:pk>/prompts/new/", views.prompt_new_page, name="prompt_new"),
    path("w/<int:pk>/prompts/import/", views.library_import_page, name="prompt_import"),
    path("w/<int:pk>/prompts/export/", views.library_export_page, name="prompt_export"),
    path("prompts/<int:pk>/", views.prompt_detail, name="prompt"),
    path("prompts/<int:pk>/versions/", views.version_add, name="prompt_version_add"),
    path("prompt-versions/<int:pk>/promote/", views.version_promote, name="prompt_promote"),
    path("compare/<int:pk>/save-to-library/", views.variant_save_page, name="variant_save"),
    path("compare/<int:pk>/rounds/<int:number>/diff/", views.answer_diff, name="answer_diff"),
]
