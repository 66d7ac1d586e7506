"""Inbox API: my next round to vote on across a workspace, skip a round, undo my last vote or skip."""

from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from compare.access import round_for_user
from lab.access import workspace_for_user

from ..inbox import services
from ..inbox.selectors import InboxFilters, inbox_view
from . import inbox_serializers as s


def _view_data(view: dict, serializer=s.InboxNextOut, **extra) -> dict:
    return serializer({**view, **extra}, context={"labels_visible": view["labels_visible"]}).data


def _workspace_round(request, workspace):
    """The round named in the body, if it belongs to this workspace (404 otherwise, like any other's object)."""
    body = s.InboxRoundIn(data=request.data)
    body.is_valid(raise_exception=True)
    round_ = round_for_user(request.user, body.validated_data["round"])
    if round_.group.workspace_id != workspace.pk:
        raise Http404("No such round.")
    return round_, body.validated_data["blind"]


class InboxNext(APIView):
    @extend_schema(parameters=[s.InboxQueryIn], responses=s.InboxNextOut, operation_id="inbox_next")
    def get(self, request, pk):
        workspace = workspace_for_user(request.user, pk)  # viewers vote too
        query = s.InboxQueryIn(data=request.query_params, context={"workspace": workspace})
        query.is_valid(raise_exception=True)
        filters, blind = query.filters(), query.validated_data["blind"]
        round_ = services.inbox_serve(workspace=workspace, user=request.user, filters=filters, blind=blind)
        view = inbox_view(round_, request.user, workspace=workspace, filters=filters, blind=blind)
        return Response(_view_data(view))


class InboxSkip(APIView):
    @extend_schema(request=s.InboxRoundIn, responses=s.InboxSkipOut, operation_id="inbox_skip")
    def post(self, request, pk):
        workspace = workspace_for_user(request.user, pk)
        round_, _ = _workspace_round(request, workspace)
        services.inbox_skip(round=round_, user=request.user)
        return Response(s.InboxSkipOut({"round": round_.pk, "skipped": True}).data)


class InboxUndo(APIView):
    @extend_schema(request=s.InboxRoundIn, responses=s.InboxUndoOut, operation_id="inbox_undo")
    def post(self, request, pk):
        workspace = workspace_for_user(request.user, pk)
        round_, blind = _workspace_round(request, workspace)
        undone = services.inbox_undo(round=round_, user=request.user, blind=blind)
        view = inbox_view(round_, request.user, workspace=workspace, filters=InboxFilters(), blind=blind)
        return Response(_view_data(view, s.InboxUndoOut, undone=undone))
