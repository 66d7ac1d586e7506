"""Judging API views: thin. Each reaches its object through the access helpers and calls a service."""

from drf_spectacular.utils import extend_schema
from rest_framework import generics, status
from rest_framework.response import Response
from rest_framework.views import APIView

from compare.access import group_for_user, round_for_user
from lab.access import workspace_for_user
from lab.models import Role

from .. import selectors, services
from ..access import judge_from_body, judge_in_workspace
from . import serializers as s


class JudgeList(generics.GenericAPIView):
    serializer_class = s.JudgeOut

    @extend_schema(operation_id="judges_list", responses=s.JudgeOut(many=True))
    def get(self, request, pk):
        workspace = workspace_for_user(request.user, pk)
        page = self.paginate_queryset(selectors.judges_of(workspace))
        return self.get_paginated_response(s.JudgeOut(page, many=True).data)

    @extend_schema(request=s.JudgeIn, responses={201: s.JudgeOut})
    def post(self, request, pk):
        workspace = workspace_for_user(request.user, pk, role=Role.EDITOR)
        data = s.JudgeIn(data=request.data)
        data.is_valid(raise_exception=True)
        judge = services.judge_config_create(workspace=workspace, user=request.user, **data.validated_data)
        return Response(s.JudgeOut(judge).data, status=status.HTTP_201_CREATED)


class JudgeDetail(APIView):
    @extend_schema(responses=s.JudgeOut)
    def get(self, request, pk, judge_id):
        return Response(s.JudgeOut(judge_in_workspace(request.user, pk, judge_id)).data)

    @extend_schema(request=s.JudgeIn, responses=s.JudgeOut)
    def patch(self, request, pk, judge_id):
        judge = judge_in_workspace(request.user, pk, judge_id, write=True)
        data = s.JudgeIn(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        judge = services.judge_config_update(judge=judge, **data.validated_data)
        return Response(s.JudgeOut(judge).data)

    @extend_schema(request=None, responses={204: None})
    def delete(self, request, pk, judge_id):
        services.judge_config_delete(judge=judge_in_workspace(request.user, pk, judge_id, write=True))
        return Response(status=status.HTTP_204_NO_CONTENT)


class JudgeDiagnostics(APIView):
    @extend_schema(responses=s.DiagnosticsOut)
    def get(self, request, pk, judge_id):
        judge = judge_in_workspace(request.user, pk, judge_id)
        return Response(s.DiagnosticsOut(selectors.judge_diagnostics(judge)).data)


class RoundJudge(APIView):
    @extend_schema(request=s.RoundJudgeIn, responses={202: s.VerdictOut})
    def post(self, request, pk):
        round_ = round_for_user(request.user, pk, write=True)
        data = s.RoundJudgeIn(data=request.data)
        data.is_valid(raise_exception=True)
        judge = judge_from_body(data.validated_data.get("judge"), round_.group.workspace)
        verdict = services.verdict_request(round=round_, user=request.user, judge=judge)
        return Response(s.VerdictOut(verdict).data, status=status.HTTP_202_ACCEPTED)


class RoundVerdicts(APIView):
    @extend_schema(responses=s.RoundVerdictsOut)
    def get(self, request, pk):
        verdicts, hidden = selectors.verdicts_as_seen_by(round_for_user(request.user, pk), request.user)
        return Response(s.RoundVerdictsOut({"hidden": hidden, "verdicts": verdicts}).data)


class GroupJudge(APIView):
    @extend_schema(request=s.GroupJudgeIn, responses=s.GroupJudgeIn)
    def put(self, request, pk):
        group = group_for_user(request.user, pk, write=True)
        data = s.GroupJudgeIn(data=request.data)
        data.is_valid(raise_exception=True)
        judge = judge_from_body(data.validated_data["judge"], group.workspace)
        allow = data.validated_data["allow_same_family"]
        services.group_judge_set(group=group, judge=judge, allow_same_family=allow, user=request.user)
        return Response({"judge": judge.pk if judge else None, "allow_same_family": allow})

    @extend_schema(responses=s.GroupJudgeIn)
    def get(self, request, pk):
        group = group_for_user(request.user, pk)
        return Response({"judge": selectors.group_judge_id(group.pk)})
