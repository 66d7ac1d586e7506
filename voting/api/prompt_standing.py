"""`GET /api/v1/prompts/{id}/standing/`: each version's accumulated win rate, rating, judge scores and experiments."""

from __future__ import annotations

from dataclasses import asdict

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from compare.access import prompt_for_user

from ..prompt_versions import prompt_standing


class VersionWinRateOut(serializers.Serializer):
    appearances = serializers.IntegerField()
    wins = serializers.IntegerField()
    losses = serializers.IntegerField()
    ties = serializers.IntegerField()
    all_bad = serializers.IntegerField()
    decisive = serializers.IntegerField()
    win_rate = serializers.FloatField(allow_null=True)
    ci_low = serializers.FloatField(allow_null=True)
    ci_high = serializers.FloatField(allow_null=True)


class VersionRatingOut(serializers.Serializer):
    rating = serializers.FloatField()
    ci_low = serializers.FloatField(allow_null=True, help_text="null when the interval measures nothing")
    ci_high = serializers.FloatField(allow_null=True)
    not_measured = serializers.CharField(allow_null=True, help_text="why the interval measures nothing")
    rank = serializers.IntegerField(help_text="among every prompt version of the workspace")
    matches = serializers.IntegerField()


class JudgeMeanOut(serializers.Serializer):
    judge = serializers.CharField()
    scores = serializers.IntegerField()
    mean = serializers.FloatField(help_text="weighted judge score, 0–1")


class ExperimentRunOut(serializers.Serializer):
    group = serializers.IntegerField()
    title = serializers.CharField()
    answers = serializers.IntegerField()
    mean_score = serializers.FloatField(allow_null=True)


class VersionStandingOut(serializers.Serializer):
    version = serializers.IntegerField(help_text="the version's id")
    number = serializers.IntegerField()
    comparisons = serializers.IntegerField()
    win_rate = VersionWinRateOut(allow_null=True)
    rating = VersionRatingOut(allow_null=True)
    judge_scores = JudgeMeanOut(many=True)
    experiments = ExperimentRunOut(many=True)


def standing_body(prompt) -> list[dict]:
    return [
        {
            "version": s.version.pk,
            "number": s.version.number,
            "comparisons": s.comparisons,
            "win_rate": asdict(s.win_rate) if s.win_rate else None,
            "rating": s.rating.as_shown() if s.rating else None,
            "judge_scores": [asdict(j) for j in s.judge_scores],
            "experiments": [asdict(e) for e in s.experiments],
        }
        for s in prompt_standing(prompt)
    ]


class PromptStanding(APIView):
    @extend_schema(responses=VersionStandingOut(many=True))
    def get(self, request, pk):
        return Response(VersionStandingOut(standing_body(prompt_for_user(request.user, pk)), many=True).data)
