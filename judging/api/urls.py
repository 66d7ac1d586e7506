"""Judging API routes, mounted at /api/v1/ by the project urls."""

from django.urls import path

from . import views

urlpatterns = [
    path("workspaces/<int:pk>/judges/", views.JudgeList.as_view(), name="api-judges"),
    path("workspaces/<int:pk>/judges/<int:judge_id>/", views.JudgeDetail.as_view(), name="api-judge"),
    path(
        "workspaces/<int:pk>/judges/<int:judge_id>/diagnostics/",
        views.JudgeDiagnostics.as_view(),
        name="api-judge-diagnostics",
    ),
    path("rounds/<int:pk>/judge/", views.RoundJudge.as_view(), name="api-round-judge"),
    path("rounds/<int:pk>/verdicts/", views.RoundVerdicts.as_view(), name="api-round-verdicts"),
    path("groups/<int:pk>/judge/", views.GroupJudge.as_view(), name="api-group-judge"),
]
