"""Baseline API of an experiment run (ids are its comparison's, as for /experiments/{id}/): read the comparison
with its baseline, choose the baseline, pin the run as the baseline of its name. Thin: compare.experiments.baseline
holds the rules."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from ..access import experiment_for_user, group_for_user
from ..experiments.baseline import (
    BaselineComparison,
    baseline_compare,
    baseline_of,
    baseline_pin,
    baseline_resolve,
    experiment_baseline_set,
    pinned_baseline,
)


class ChooseIn(serializers.Serializer):
    baseline = serializers.CharField(max_length=40, help_text="a comparison id, or 'latest'")


class BaselineTestOut(serializers.Serializer):
    method = serializers.CharField()
    n_pairs = serializers.IntegerField()
    n_nonzero = serializers.IntegerField()
    mean_difference = serializers.FloatField(allow_null=True, help_text="this run − the baseline")
    p_value = serializers.FloatField(allow_null=True)
    alpha = serializers.FloatField()
    minimum = serializers.IntegerField(help_text="differing pairs needed before any verdict")
    more_needed = serializers.IntegerField()


class BaselinePairOut(serializers.Serializer):
    row = serializers.CharField()
    combination = serializers.CharField()
    baseline_score = serializers.FloatField(allow_null=True)
    current_score = serializers.FloatField(allow_null=True)
    change = serializers.FloatField(allow_null=True)
    baseline_answer = serializers.CharField(allow_null=True)
    current_answer = serializers.CharField(allow_null=True)
    answer_changed = serializers.BooleanField(allow_null=True)
    baseline_html = serializers.CharField(allow_null=True, help_text="escaped, deletions in <del>")
    current_html = serializers.CharField(allow_null=True, help_text="escaped, insertions in <ins>")


class ComparisonOut(serializers.Serializer):
    """What a run shows against its baseline (an experiment run's, or a comparison's dataset run's)."""

    score = serializers.CharField(allow_null=True)
    verdict = serializers.CharField(allow_null=True)
    sentence = serializers.CharField(allow_null=True)
    regression = serializers.BooleanField()
    baseline_mean = serializers.FloatField(allow_null=True)
    current_mean = serializers.FloatField(allow_null=True)
    changed_answers = serializers.IntegerField(allow_null=True)
    test = BaselineTestOut(allow_null=True)
    pairs = BaselinePairOut(many=True)


class BaselineOut(ComparisonOut):
    experiment = serializers.IntegerField()
    baseline = serializers.IntegerField(allow_null=True)
    pinned = serializers.IntegerField(allow_null=True, help_text="the pinned baseline of this experiment's name")


def _pair(pair) -> dict:
    return {
        "row": pair.row,
        "combination": pair.combination,
        "baseline_score": pair.baseline_score,
        "current_score": pair.current_score,
        "change": pair.change,
        "baseline_answer": pair.baseline.output.text if pair.baseline else None,
        "current_answer": pair.current.output.text if pair.current else None,
        "answer_changed": pair.diff.changed if pair.diff else None,
        "baseline_html": str(pair.diff.old) if pair.diff else None,
        "current_html": str(pair.diff.new) if pair.diff else None,
    }


def baseline_body(experiment, comparison: BaselineComparison | None) -> dict:
    pinned = pinned_baseline(experiment)
    return {
        "experiment": experiment.group_id,
        "baseline": comparison.baseline.group_id if comparison else None,
        "pinned": pinned.group_id if pinned else None,
        **comparison_fields(comparison),
    }


def comparison_fields(comparison: BaselineComparison | None) -> dict:
    """The verdict, figures and pairs of `comparison`, or their empty values when there is no baseline."""
    body = {
        "regression": bool(comparison and comparison.is_regression),
        "pairs": [_pair(pair) for pair in comparison.pairs] if comparison else [],
    }
    if comparison is None:
        empty = ("score", "verdict", "sentence", "baseline_mean", "current_mean", "changed_answers", "test")
        return {**body, **dict.fromkeys(empty)}
    test = comparison.test
    return {
        **body,
        "score": comparison.score_description,
        "verdict": comparison.verdict,
        "sentence": comparison.sentence,
        "baseline_mean": comparison.baseline_mean,
        "current_mean": comparison.current_mean,
        "changed_answers": comparison.changed_answers,
        "test": {name: getattr(test, name) for name in BaselineTestOut().fields},
    }


def _comparison(experiment) -> BaselineComparison | None:
    baseline = baseline_of(experiment)
    return baseline_compare(baseline=baseline, current=experiment) if baseline else None


class ExperimentBaseline(APIView):
    @extend_schema(responses=BaselineOut)
    def get(self, request, pk):
        experiment = experiment_for_user(request.user, pk)
        return Response(baseline_body(experiment, _comparison(experiment)))

    @extend_schema(request=ChooseIn, responses=BaselineOut)
    def post(self, request, pk):
        group = group_for_user(request.user, pk, write=True)
        experiment = experiment_for_user(request.user, group.pk)
        data = ChooseIn(data=request.data)
        data.is_valid(raise_exception=True)
        baseline = baseline_resolve(
            workspace=group.workspace, name=group.title, value=data.validated_data["baseline"], exclude=experiment
        )
        experiment_baseline_set(experiment=experiment, baseline=baseline)
        return Response(baseline_body(experiment, _comparison(experiment)))


class ExperimentPin(APIView):
    @extend_schema(request=None, responses={201: BaselineOut})
    def post(self, request, pk):
        group = group_for_user(request.user, pk, write=True)
        experiment = experiment_for_user(request.user, group.pk)
        baseline_pin(experiment=experiment, user=request.user)
        return Response(baseline_body(experiment, _comparison(experiment)), status=status.HTTP_201_CREATED)
