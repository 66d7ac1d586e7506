"""Baseline API of a comparison's dataset run (the rounds of one `POST /groups/{id}/runs/` with a dataset, named
by their `run_id`): the run against an earlier one, and pinning it as the comparison's baseline. Thin:
compare.experiments.run_baseline holds the rules."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import NotFound
from rest_framework.response import Response
from rest_framework.views import APIView

from ..access import group_for_user
from ..experiments.baseline import LATEST, BaselineComparison
from ..experiments.run_baseline import (
    DatasetRun,
    dataset_run_compare,
    dataset_run_pin,
    dataset_run_resolve,
    pinned_dataset_run,
)
from .baselines import ComparisonOut, comparison_fields


class RunBaselineOut(ComparisonOut):
    group = serializers.IntegerField()
    run = serializers.UUIDField()
    baseline = serializers.UUIDField(allow_null=True, help_text="the dataset run this one is checked against")
    pinned = serializers.UUIDField(allow_null=True, help_text="the comparison's pinned baseline run")


AGAINST = OpenApiParameter(
    "against",
    OpenApiTypes.STR,
    description=f"a dataset run id of this comparison, or {LATEST!r} (default): the pinned run, else the newest "
    "earlier run on the same dataset",
)


def _run(group, run_id) -> DatasetRun:
    try:
        return dataset_run_resolve(group=group, value=str(run_id), field="run")
    except ValidationError:
        raise NotFound("No such dataset run in this comparison.") from None


def _body(run: DatasetRun, comparison: BaselineComparison | None) -> dict:
    pinned = pinned_dataset_run(run.group)
    return {
        "group": run.group.pk,
        "run": run.run_id,
        "baseline": comparison.baseline.run_id if comparison else None,
        "pinned": pinned.run_id if pinned else None,
        **comparison_fields(comparison),
    }


def _comparison(run: DatasetRun, against: str) -> BaselineComparison | None:
    try:
        baseline = dataset_run_resolve(group=run.group, value=against, field="against", current=run)
    except ValidationError:
        if against.strip().lower() == LATEST:
            return None  # nothing earlier yet: the body says so with a null baseline
        raise
    return dataset_run_compare(baseline=baseline, current=run)


class RunBaseline(APIView):
    @extend_schema(parameters=[AGAINST], responses=RunBaselineOut)
    def get(self, request, pk, run_id):
        run = _run(group_for_user(request.user, pk), run_id)
        return Response(_body(run, _comparison(run, request.query_params.get("against", LATEST))))


class RunPin(APIView):
    @extend_schema(request=None, responses={201: RunBaselineOut})
    def post(self, request, pk, run_id):
        run = _run(group_for_user(request.user, pk, write=True), run_id)
        dataset_run_pin(run=run, user=request.user)
        return Response(_body(run, _comparison(run, LATEST)), status=status.HTTP_201_CREATED)
