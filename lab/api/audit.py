"""API for a workspace's audit log, newest first, optionally of one action; owners only."""

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, serializers

from ..access import workspace_for_user
from ..audit.models import AuditEntry
from ..audit.selectors import audit_entries
from ..models import Role


class AuditEntryOut(serializers.ModelSerializer):
    class Meta:
        model = AuditEntry
        fields = ["id", "created_at", "actor_name", "action", "target_type", "target_id", "target_name", "details"]


class AuditList(generics.GenericAPIView):
    serializer_class = AuditEntryOut

    @extend_schema(
        operation_id="audit_list",
        responses=AuditEntryOut(many=True),
        parameters=[OpenApiParameter("action", str, description="only entries of this action")],
    )
    def get(self, request, pk):
        workspace = workspace_for_user(request.user, pk, role=Role.OWNER)
        page = self.paginate_queryset(audit_entries(workspace=workspace, action=request.query_params.get("action", "")))
        return self.get_paginated_response(AuditEntryOut(page, many=True).data)
