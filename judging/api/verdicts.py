"""Verdicts API: ask the judge to judge a round now, and read a round's verdicts (hidden in blind mode until you
vote). Its In/Out serializers, then the views: thin, each reaches its object through the access helpers."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from compare.access import round_for_user
from lab.api.inputs import StrictIn

from .. import selectors, services
from ..access import judge_from_body
from ..models import Verdict, VerdictOutput


class RoundJudgeIn(StrictIn):
    judge = serializers.IntegerField(required=False, allow_null=True, help_text="default: the comparison's judge")


class VerdictOutputOut(serializers.ModelSerializer):
    output = serializers.IntegerField(source="output_id")

    class Meta:
        model = VerdictOutput
        fields = ["output", "letter", "judged", "skip_reason", "score", "rank", "scores", "category"]


class VerdictOut(serializers.ModelSerializer):
    round = serializers.IntegerField(source="round_id")
    judge = serializers.IntegerField(source="judge_id", allow_null=True)
    winner = serializers.IntegerField(source="winner_id", allow_null=True)
    outputs = VerdictOutputOut(many=True, read_only=True)
    cost = serializers.FloatField(allow_null=True)

    class Meta:
        model = Verdict
        fields = [
            "id",
            "round",
            "judge",
            "judge_name",
            "judge_model",
            "scale",
            "mode",
            "status",
            "winner",
            "tie",
            "decided_by",
            "seed",
            "letters",
            "weights",
            "missing_metrics",
            "skipped",
            "pairs",
            "calls",
            "judge_calls",
            "input_tokens",
            "output_tokens",
            "cost",
            "error",
            "inputs_note",
            "created_at",
            "finished_at",
            "outputs",
        ]


class RoundVerdictsOut(serializers.Serializer):
    hidden = serializers.BooleanField(help_text="blind mode before you voted: verdicts are shown after your vote")
    verdicts = VerdictOut(many=True)


class RoundJudge(APIView):
    @extend_schema(request=RoundJudgeIn, responses={202: VerdictOut})
    def post(self, request, pk):
        round_ = round_for_user(request.user, pk, write=True)
        data = RoundJudgeIn(data=request.data)
        data.is_valid(raise_exception=True)
        judge = judge_from_body(data.validated_data.get("judge"), round_.group.workspace)
        verdict = services.verdict_request(round=round_, user=request.user, judge=judge)
        return Response(VerdictOut(verdict).data, status=status.HTTP_202_ACCEPTED)


class RoundVerdicts(APIView):
    @extend_schema(responses=RoundVerdictsOut)
    def get(self, request, pk):
        verdicts, hidden = selectors.verdicts_as_seen_by(round_for_user(request.user, pk), request.user)
        return Response(RoundVerdictsOut({"hidden": hidden, "verdicts": verdicts}).data)
