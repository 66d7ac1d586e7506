"""Report and leaderboard API: a comparison's statistics and a workspace's ratings, as JSON or CSV (`?format=csv`).

Both are read from the cache (voting.cache), which a new vote or verdict invalidates.
"""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from compare.access import group_for_user
from lab.access import workspace_for_user

from ..cache import cached_group_report, cached_leaderboard
from . import report_serializers as s
from .csv_export import CSVRenderer, leaderboard_rows, report_rows

FORMAT = OpenApiParameter("format", str, enum=["json", "csv"], description="csv: the main table only")


def attachment(name: str) -> dict[str, str]:
    return {"Content-Disposition": f'attachment; filename="{name}.csv"'}


class GroupReport(APIView):
    renderer_classes = [*api_settings.DEFAULT_RENDERER_CLASSES, CSVRenderer]

    @extend_schema(
        parameters=[s.ReportQueryIn, FORMAT],
        responses={(200, "application/json"): s.GroupReportOut, (200, "text/csv"): OpenApiTypes.STR},
    )
    def get(self, request, pk):
        group = group_for_user(request.user, pk)
        query = s.ReportQueryIn(data=request.query_params)
        query.is_valid(raise_exception=True)
        report = cached_group_report(group, pass_threshold=query.validated_data["pass_threshold"])
        data = s.GroupReportOut(report).data
        if request.accepted_renderer.format == CSVRenderer.format:
            return Response(report_rows(data), headers=attachment(f"report-{group.pk}"))
        return Response(data)


class WorkspaceLeaderboard(APIView):
    renderer_classes = [*api_settings.DEFAULT_RENDERER_CLASSES, CSVRenderer]

    @extend_schema(
        parameters=[s.LeaderboardQueryIn, FORMAT],
        responses={(200, "application/json"): s.LeaderboardOut, (200, "text/csv"): OpenApiTypes.STR},
    )
    def get(self, request, pk):
        workspace = workspace_for_user(request.user, pk)
        query = s.LeaderboardQueryIn(data=request.query_params, context={"workspace": workspace})
        query.is_valid(raise_exception=True)
        board = cached_leaderboard(workspace, by=query.validated_data["by"], filters=query.filters())
        data = s.LeaderboardOut(board).data
        if request.accepted_renderer.format == CSVRenderer.format:
            return Response(leaderboard_rows(data), headers=attachment(f"leaderboard-{workspace.pk}-{data['by']}"))
        return Response(data)
