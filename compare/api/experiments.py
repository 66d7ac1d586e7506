"""Experiment API: estimate or start an experiment from a file's text (YAML or JSON), and read one's progress and
averages. Thin: the file is checked and run by compare.experiments; the rounds run on the workers."""

from __future__ import annotations

from dataclasses import asdict
from decimal import Decimal

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from lab.api.inputs import StrictIn

from ..access import experiment_for_user, workspace_from_body
from ..experiments.budget import budget_check
from ..experiments.config import config_read
from ..experiments.files import UploadedFiles
from ..experiments.models import Experiment
from ..experiments.results import GROUPINGS, experiment_results
from ..experiments.selectors import experiment_progress
from ..experiments.services import experiment_create, experiment_plan, experiment_start
from ..experiments.spec import ConfigError

FORMATS = {"yaml": "experiment.yaml", "json": "experiment.json"}  # the format → a file name, for messages
FILE_FORMATS = tuple(FORMATS)


class ExperimentIn(StrictIn):
    workspace = serializers.IntegerField()
    file = serializers.CharField(trim_whitespace=False, max_length=5 * 1024 * 1024, help_text="the file's text")
    format = serializers.ChoiceField(choices=FILE_FORMATS, default="yaml")
    name = serializers.CharField(max_length=300, required=False, help_text="the file's name, for messages")
    budget = serializers.DecimalField(max_digits=14, decimal_places=6, min_value=Decimal("0.000001"), required=False)
    dry_run = serializers.BooleanField(default=False, help_text="estimate only; nothing is saved")
    files = serializers.DictField(
        child=serializers.CharField(trim_whitespace=False),
        required=False,
        default=dict,
        help_text="the files its $file: and file: entries name, path → text",
    )


class ExperimentOut(serializers.Serializer):
    group = serializers.IntegerField(allow_null=True)
    estimate = serializers.DictField()
    progress = serializers.DictField(allow_null=True)
    averages = serializers.DictField(allow_null=True)


class ExperimentList(APIView):
    @extend_schema(request=ExperimentIn, responses={200: ExperimentOut, 201: ExperimentOut})
    def post(self, request):
        data = ExperimentIn(data=request.data)
        data.is_valid(raise_exception=True)
        fields = data.validated_data
        workspace = workspace_from_body(request.user, fields["workspace"])
        source = fields.get("name") or FORMATS[fields["format"]]
        files = UploadedFiles({path: text.encode() for path, text in fields["files"].items()})
        try:
            config = config_read(fields["file"], source=source, files=files, workspace=workspace)
            _, estimate = experiment_plan(config=config, workspace=workspace)
            budget_check(budget=fields.get("budget"), calls=estimate.calls, unpriced_calls=estimate.unpriced_calls)
            if fields["dry_run"]:
                body = {"group": None, "estimate": estimate.as_dict(), "progress": None, "averages": None}
                return Response(body)
            experiment = experiment_create(
                workspace=workspace, user=request.user, config=config, source=source, budget=fields.get("budget")
            )
        except ConfigError as exc:
            raise serializers.ValidationError({"file": exc.messages}) from None
        experiment_start(experiment=experiment, user=request.user)
        return Response(_detail(experiment), status=status.HTTP_201_CREATED)


class ExperimentDetail(APIView):
    @extend_schema(responses=ExperimentOut)
    def get(self, request, pk):
        return Response(_detail(experiment_for_user(request.user, pk)))


def _detail(experiment: Experiment) -> dict:
    results = experiment_results(experiment)
    averages = {
        key: [{**asdict(a), "cost": float(a.cost) if a.cost is not None else None} for a in results.averages[key]]
        for key in [*(key for key, _ in GROUPINGS), "combination"]
    }
    return {
        "group": experiment.group_id,
        "estimate": experiment.estimate,
        "progress": experiment_progress(experiment),
        "averages": averages,
    }
