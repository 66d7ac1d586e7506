"""Judging API routes, mounted at /api/v1/ by the project urls."""

from django.urls import path

from . import judges, verdicts

urlpatterns = [
    path("workspaces/<int:pk>/judges/", judges.JudgeList.as_view(), name="api-judges"),
    path("workspaces/<int:pk>/judges/<int:judge_id>/", judges.JudgeDetail.as_view(), name="api-judge"),
    path(
        "workspaces/<int:pk>/judges/<int:judge_id>/diagnostics/",
        judges.JudgeDiagnostics.as_view(),
        name="api-judge-diagnostics",
    ),
    path("rounds/<int:pk>/judge/", verdicts.RoundJudge.as_view(), name="api-round-judge"),
    path("rounds/<int:pk>/verdicts/", verdicts.RoundVerdicts.as_view(), name="api-round-verdicts"),
    path("groups/<int:pk>/judge/", judges.GroupJudge.as_view(), name="api-group-judge"),
]
