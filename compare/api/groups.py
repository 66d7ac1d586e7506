"""Compare API views: thin. Each reaches its object through the access helpers and calls a service."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, status
from rest_framework.response import Response
from rest_framework.views import APIView

from lab.templating import render_variants

from .. import selectors, services
from ..access import dataset_from_body, group_for_user, round_for_user, workspace_from_body
from ..blind import outputs_as_seen_by
from . import serializers as s


def _group_detail(group, request) -> dict:
    group = selectors.groups_for_user(request.user).get(pk=group.pk)
    context = {
        "request": request,
        "rounds": selectors.group_recent_rounds(group),
        "warnings": selectors.group_rendering(group).warnings,
    }
    return s.GroupDetailOut(group, context=context).data


def _round_detail(round_, request) -> dict:
    round_ = selectors.round_with_outputs(round_)
    outputs, visible = outputs_as_seen_by(round_, request.user)
    return s.RoundOut(round_, context={"request": request, "outputs": outputs, "labels_visible": visible}).data


class GroupList(generics.GenericAPIView):
    serializer_class = s.GroupOut

    @extend_schema(
        operation_id="groups_list",
        responses=s.GroupOut(many=True),
        parameters=[
            OpenApiParameter("workspace", int, description="only this workspace"),
            OpenApiParameter("q", str, description="text in the title or prompts"),
            OpenApiParameter("model", str, description="a composite model id used by a variant"),
        ],
    )
    def get(self, request):
        data = s.GroupFilterIn(data=request.query_params)
        data.is_valid(raise_exception=True)
        page = self.paginate_queryset(selectors.groups_for_user(request.user, **data.validated_data))
        return self.get_paginated_response(s.GroupOut(page, many=True).data)

    @extend_schema(request=s.GroupIn, responses={201: s.GroupDetailOut})
    def post(self, request):
        data = s.GroupIn(data=request.data)
        data.is_valid(raise_exception=True)
        fields = dict(data.validated_data)
        workspace = workspace_from_body(request.user, fields.pop("workspace"))
        fields["dataset"] = dataset_from_body(fields.pop("dataset"), workspace)
        group = services.group_create(workspace=workspace, user=request.user, **fields)
        return Response(_group_detail(group, request), status=status.HTTP_201_CREATED)


class GroupDetail(APIView):
    @extend_schema(responses=s.GroupDetailOut)
    def get(self, request, pk):
        return Response(_group_detail(group_for_user(request.user, pk), request))

    @extend_schema(responses={204: None})
    def delete(self, request, pk):
        services.group_delete(group=group_for_user(request.user, pk, write=True), user=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class GroupRuns(APIView):
    @extend_schema(request=s.RunsIn, responses={202: s.RunsOut})
    def post(self, request, pk):
        group = group_for_user(request.user, pk, write=True)
        data = s.RunsIn(data=request.data)
        data.is_valid(raise_exception=True)
        dataset = dataset_from_body(data.validated_data.get("dataset"), group.workspace)
        rounds = services.round_start(
            group=group, user=request.user, repeat=data.validated_data.get("repeat"), dataset=dataset
        )
        return Response(s.RunsOut({"rounds": rounds}).data, status=status.HTTP_202_ACCEPTED)


class GroupClone(APIView):
    @extend_schema(request=s.GroupCloneIn, responses={201: s.GroupDetailOut})
    def post(self, request, pk):
        group = group_for_user(request.user, pk, write=True)
        data = s.GroupCloneIn(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        clone = services.group_clone(group=group, user=request.user, **data.validated_data)
        return Response(_group_detail(clone, request), status=status.HTTP_201_CREATED)


class GroupPreview(APIView):
    """Render the variants of a group-create body for given variables; nothing is saved."""

    @extend_schema(request=s.GroupPreviewIn, responses=s.PreviewOut)
    def post(self, request):
        data = s.GroupPreviewIn(data=request.data)
        data.is_valid(raise_exception=True)
        rendered = render_variants(
            system_prompt=data.validated_data["system_prompt"],
            variables=data.validated_data["shared_variables"],
            variants=services.variant_templates(data.validated_data["variants"]),
        )
        payload = {"variants": rendered.variants, "errors": rendered.errors, "warnings": rendered.warnings}
        return Response(s.PreviewOut(payload).data)


class RoundDetail(APIView):
    @extend_schema(responses=s.RoundOut)
    def get(self, request, pk):
        return Response(_round_detail(round_for_user(request.user, pk), request))


class RoundCancel(APIView):
    @extend_schema(request=None, responses=s.RoundOut)
    def post(self, request, pk):
        round_ = services.round_cancel(round_=round_for_user(request.user, pk, write=True), user=request.user)
        return Response(_round_detail(round_, request))
