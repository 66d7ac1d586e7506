"""Compare API routes, mounted at /api/v1/ by the project urls."""

from django.urls import path

from . import assertions, baselines, conversations, datasets, experiments, groups, prompts, run_baselines

urlpatterns = [
    path("groups/", groups.GroupList.as_view(), name="api-groups"),
    path("groups/preview/", groups.GroupPreview.as_view(), name="api-group-preview"),
    path("groups/<int:pk>/", groups.GroupDetail.as_view(), name="api-group"),
    path("groups/<int:pk>/runs/", groups.GroupRuns.as_view(), name="api-group-runs"),
    path(
        "groups/<int:pk>/runs/<uuid:run_id>/baseline/",
        run_baselines.RunBaseline.as_view(),
        name="api-group-run-baseline",
    ),
    path("groups/<int:pk>/runs/<uuid:run_id>/pin/", run_baselines.RunPin.as_view(), name="api-group-run-pin"),
    path("groups/<int:pk>/clone/", groups.GroupClone.as_view(), name="api-group-clone"),
    path("groups/<int:pk>/assertions/rerun/", assertions.AssertionsRerun.as_view(), name="api-group-assertions-rerun"),
    path("groups/<int:pk>/reveal/", groups.GroupReveal.as_view(), name="api-group-reveal"),
    path("rounds/<int:pk>/", groups.RoundDetail.as_view(), name="api-round"),
    path("rounds/<int:pk>/cancel/", groups.RoundCancel.as_view(), name="api-round-cancel"),
    path("rounds/<int:pk>/continue/", conversations.RoundContinue.as_view(), name="api-round-continue"),
    path("datasets/", datasets.DatasetList.as_view(), name="api-datasets"),
    path("datasets/<int:pk>/", datasets.DatasetDetail.as_view(), name="api-dataset"),
    path("datasets/import/", datasets.DatasetImport.as_view(), name="api-dataset-import"),
    path("datasets/preview/", datasets.DatasetPreview.as_view(), name="api-dataset-preview"),
    path("datasets/<int:pk>/rows/", datasets.DatasetRows.as_view(), name="api-dataset-rows"),
    path("datasets/<int:pk>/rows/<int:position>/", datasets.DatasetRowDetail.as_view(), name="api-dataset-row"),
    path("experiments/", experiments.ExperimentList.as_view(), name="api-experiments"),
    path("experiments/<int:pk>/", experiments.ExperimentDetail.as_view(), name="api-experiment"),
    path("experiments/<int:pk>/baseline/", baselines.ExperimentBaseline.as_view(), name="api-experiment-baseline"),
    path("experiments/<int:pk>/pin/", baselines.ExperimentPin.as_view(), name="api-experiment-pin"),
    path("workspaces/<int:pk>/prompts/", prompts.PromptList.as_view(), name="api-prompts"),
    path("workspaces/<int:pk>/prompt-library/", prompts.Library.as_view(), name="api-prompt-library"),
    path("prompts/<int:pk>/", prompts.PromptDetail.as_view(), name="api-prompt"),
    path("prompts/<int:pk>/versions/", prompts.PromptVersions.as_view(), name="api-prompt-versions"),
    path("prompts/<int:pk>/diff/", prompts.PromptDiff.as_view(), name="api-prompt-diff"),
    path("prompt-versions/<int:pk>/diff/", prompts.VersionDiff.as_view(), name="api-version-diff"),
    path("prompt-versions/<int:pk>/promote/", prompts.VersionPromote.as_view(), name="api-version-promote"),
    path("variants/<int:pk>/save-version/", prompts.VariantSaveVersion.as_view(), name="api-variant-save"),
]
