"""Judging pages and the verdict partial the comparison page fetches by URL."""

from django.urls import path

from . import views

app_name = "judging"

urlpatterns = [
    path("w/<int:pk>/judges/", views.judge_list, name="list"),
    path("w/<int:pk>/judges/new/", views.judge_new, name="new"),
    path("judges/<int:pk>/", views.judge_detail, name="detail"),
    path("judges/<int:pk>/edit/", views.judge_edit, name="edit"),
    path("judges/<int:pk>/delete/", views.judge_delete, name="delete"),
    path("judging/rounds/<int:pk>/verdict/", views.verdict_panel, name="verdict_panel"),
    path("judging/rounds/<int:pk>/judge/", views.round_judge, name="round_judge"),
]
