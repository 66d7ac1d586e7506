"""Judges API: a workspace's judges (list, create, read, change, delete), a judge's diagnostics, and the judge a
comparison names. Its In serializers check shapes and types (services check the rules), its Out serializers are the
responses; the views are thin: each reaches its object through the access helpers and calls a service."""

from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from compare.access import group_for_user
from lab.access import workspace_for_user
from lab.api.inputs import StrictIn
from lab.models import Role

from .. import selectors, services
from ..access import judge_from_body, judge_in_workspace
from ..classification import JudgeKind
from ..models import JudgeConfig
from ..rubric import MAX_METRICS, ConversationScope, JudgeMode, Scale
from ..services import MAX_SEED


class MetricIn(StrictIn):
    name = serializers.CharField(max_length=60)
    weight = serializers.FloatField(min_value=0, max_value=100)
    low = serializers.CharField(max_length=500)
    high = serializers.CharField(max_length=500)


class JudgeIn(StrictIn):
    name = serializers.CharField(max_length=120)
    model = serializers.CharField(max_length=300, help_text="`<connection>::<model>`")
    scale = serializers.ChoiceField(choices=Scale.choices, required=False, default=Scale.ONE_TO_FIVE)
    mode = serializers.ChoiceField(choices=JudgeMode.choices, required=False, default=JudgeMode.RELATIVE)
    metrics = MetricIn(many=True, required=False, max_length=MAX_METRICS, help_text="default: a rubric of five")
    prompt = serializers.CharField(
        max_length=20_000, required=False, allow_blank=True, trim_whitespace=False, default=""
    )
    seed = serializers.IntegerField(min_value=0, max_value=MAX_SEED - 1, required=False, allow_null=True)
    lenient_replies = serializers.BooleanField(
        required=False, default=False, help_text="read the largest JSON object in a reply (strict by default)"
    )
    kind = serializers.ChoiceField(choices=JudgeKind.choices, required=False, default=JudgeKind.RUBRIC)
    conversation = serializers.ChoiceField(
        choices=ConversationScope.choices,
        required=False,
        default=ConversationScope.LAST_TURN,
        help_text="in a conversation's later turn: judge the last answer (the conversation before it as context) "
        "or each column's whole conversation; the judge sees it anonymised",
    )
    classification = serializers.DictField(
        required=False,
        default=dict,
        help_text="for a classification kind: criteria; binary: target, non_target; multiclass: categories "
        "[{name, description}]; uncertainty (unknown, target, non_target), include_reasoning, include_score",
    )
    input_columns = serializers.ListField(
        child=serializers.CharField(max_length=60),
        required=False,
        default=list,
        max_length=20,
        help_text="dataset columns shown to a classification judge (and usable as {{column}} in its criteria)",
    )


class GroupJudgeIn(StrictIn):
    judge = serializers.IntegerField(allow_null=True, help_text="null: judge no round automatically")
    allow_same_family = serializers.BooleanField(
        required=False,
        default=False,
        help_text="judge even though the judge shares a model family with a variant; the override is recorded",
    )


# --- Output ---


class JudgeOut(serializers.ModelSerializer):
    class Meta:
        model = JudgeConfig
        fields = [
            "id",
            "workspace",
            "name",
            "model",
            "scale",
            "mode",
            "metrics",
            "prompt",
            "seed",
            "lenient_replies",
            "kind",
            "classification",
            "input_columns",
            "conversation",
            "created_at",
        ]


class PositionBiasOut(serializers.Serializer):
    judgements = serializers.IntegerField()
    flipped = serializers.IntegerField()
    share = serializers.FloatField(allow_null=True)
    first_favoured = serializers.IntegerField(help_text="flips where the answer shown first won in both orders")
    second_favoured = serializers.IntegerField(help_text="flips where the answer shown second won in both orders")
    tie_changes = serializers.IntegerField(help_text="flips to or from a tie: no direction")
    p_value = serializers.FloatField(
        allow_null=True, help_text="exact sign test, first vs second; null without such flips"
    )
    favoured = serializers.ChoiceField(choices=["first", "second"], allow_null=True)


class VerbosityOut(serializers.Serializer):
    answers = serializers.IntegerField()
    rho = serializers.FloatField(allow_null=True)
    p_value = serializers.FloatField(allow_null=True)


class DiagnosticsOut(serializers.Serializer):
    verdicts = serializers.IntegerField()
    failed = serializers.IntegerField()
    ties = serializers.IntegerField()
    position_bias = PositionBiasOut()
    verbosity = VerbosityOut()
    calls = serializers.IntegerField()
    cost = serializers.FloatField(allow_null=True)


class JudgeList(generics.GenericAPIView):
    serializer_class = JudgeOut

    @extend_schema(operation_id="judges_list", responses=JudgeOut(many=True))
    def get(self, request, pk):
        workspace = workspace_for_user(request.user, pk)
        page = self.paginate_queryset(selectors.judges_of(workspace))
        return self.get_paginated_response(JudgeOut(page, many=True).data)

    @extend_schema(request=JudgeIn, responses={201: JudgeOut})
    def post(self, request, pk):
        workspace = workspace_for_user(request.user, pk, role=Role.EDITOR)
        data = JudgeIn(data=request.data)
        data.is_valid(raise_exception=True)
        judge = services.judge_config_create(workspace=workspace, user=request.user, **data.validated_data)
        return Response(JudgeOut(judge).data, status=status.HTTP_201_CREATED)


class JudgeDetail(APIView):
    @extend_schema(responses=JudgeOut)
    def get(self, request, pk, judge_id):
        return Response(JudgeOut(judge_in_workspace(request.user, pk, judge_id)).data)

    @extend_schema(request=JudgeIn, responses=JudgeOut)
    def patch(self, request, pk, judge_id):
        judge = judge_in_workspace(request.user, pk, judge_id, write=True)
        data = JudgeIn(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        judge = services.judge_config_update(judge=judge, **data.validated_data)
        return Response(JudgeOut(judge).data)

    @extend_schema(request=None, responses={204: None})
    def delete(self, request, pk, judge_id):
        services.judge_config_delete(judge=judge_in_workspace(request.user, pk, judge_id, write=True))
        return Response(status=status.HTTP_204_NO_CONTENT)


class JudgeDiagnostics(APIView):
    @extend_schema(responses=DiagnosticsOut)
    def get(self, request, pk, judge_id):
        judge = judge_in_workspace(request.user, pk, judge_id)
        return Response(DiagnosticsOut(selectors.judge_diagnostics(judge)).data)


class GroupJudge(APIView):
    @extend_schema(request=GroupJudgeIn, responses=GroupJudgeIn)
    def put(self, request, pk):
        group = group_for_user(request.user, pk, write=True)
        data = GroupJudgeIn(data=request.data)
        data.is_valid(raise_exception=True)
        judge = judge_from_body(data.validated_data["judge"], group.workspace)
        allow = data.validated_data["allow_same_family"]
        services.group_judge_set(group=group, judge=judge, allow_same_family=allow, user=request.user)
        return Response({"judge": judge.pk if judge else None, "allow_same_family": allow})

    @extend_schema(responses=GroupJudgeIn)
    def get(self, request, pk):
        group = group_for_user(request.user, pk)
        return Response({"judge": selectors.group_judge_id(group.pk)})
