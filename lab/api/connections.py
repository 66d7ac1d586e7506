"""Lab API: workspaces, members, connections, the model catalog and the worker health check. Thin: access + service."""

from django.db.models import F
from drf_spectacular.utils import extend_schema
from rest_framework import generics, status
from rest_framework.response import Response
from rest_framework.views import APIView

from .. import catalog, services, tasks
from ..access import connection_for_user, member_for_user, workspace_for_user
from ..models import Connection, Membership, Role, Workspace
from ..providers.base import ProviderError
from . import serializers as s


class WorkspaceList(generics.GenericAPIView):
    serializer_class = s.WorkspaceOut

    def get_queryset(self):
        return Workspace.objects.filter(memberships__user=self.request.user).annotate(my_role=F("memberships__role"))

    @extend_schema(operation_id="workspaces_list", responses=s.WorkspaceOut(many=True))
    def get(self, request):
        page = self.paginate_queryset(self.get_queryset())
        return self.get_paginated_response(s.WorkspaceOut(page, many=True, context={"request": request}).data)

    @extend_schema(request=s.WorkspaceIn, responses={201: s.WorkspaceOut})
    def post(self, request):
        data = s.WorkspaceIn(data=request.data)
        data.is_valid(raise_exception=True)
        workspace = services.workspace_create(owner=request.user, name=data.validated_data["name"])
        return Response(s.WorkspaceOut(workspace, context={"request": request}).data, status=status.HTTP_201_CREATED)


class WorkspaceDetail(APIView):
    @extend_schema(responses=s.WorkspaceOut)
    def get(self, request, pk):
        workspace = workspace_for_user(request.user, pk)
        return Response(s.WorkspaceOut(workspace, context={"request": request}).data)


class MemberList(generics.GenericAPIView):
    serializer_class = s.MemberOut

    @extend_schema(operation_id="members_list", responses=s.MemberOut(many=True))
    def get(self, request, pk):
        workspace = workspace_for_user(request.user, pk)
        page = self.paginate_queryset(
            Membership.objects.filter(workspace=workspace).select_related("user").order_by("id")
        )
        return self.get_paginated_response(s.MemberOut(page, many=True).data)

    @extend_schema(request=s.MemberIn, responses={201: s.MemberOut})
    def post(self, request, pk):
        workspace = workspace_for_user(request.user, pk, role=Role.OWNER)
        data = s.MemberIn(data=request.data)
        data.is_valid(raise_exception=True)
        membership = services.membership_add(workspace=workspace, actor=request.user, **data.validated_data)
        return Response(s.MemberOut(membership).data, status=status.HTTP_201_CREATED)


class MemberDetail(APIView):
    """An owner changes a member's role (PATCH) or removes them (DELETE); the member's tokens lose it at once."""

    @extend_schema(request=s.MemberRoleIn, responses=s.MemberOut)
    def patch(self, request, pk, user_id):
        membership = member_for_user(request.user, pk, user_id)
        data = s.MemberRoleIn(data=request.data)
        data.is_valid(raise_exception=True)
        membership = services.membership_add(
            workspace=membership.workspace, username=membership.user.username, actor=request.user, **data.validated_data
        )
        return Response(s.MemberOut(membership).data)

    @extend_schema(responses={204: None})
    def delete(self, request, pk, user_id):
        services.membership_remove(membership=member_for_user(request.user, pk, user_id), actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)


class ConnectionList(generics.GenericAPIView):
    serializer_class = s.ConnectionOut

    @extend_schema(operation_id="connections_list", responses=s.ConnectionOut(many=True))
    def get(self, request, pk):
        workspace = workspace_for_user(request.user, pk)
        page = self.paginate_queryset(Connection.objects.filter(workspace=workspace))
        return self.get_paginated_response(s.ConnectionOut(page, many=True).data)

    @extend_schema(request=s.ConnectionIn, responses={201: s.ConnectionOut})
    def post(self, request, pk):
        workspace = workspace_for_user(request.user, pk, role=Role.OWNER)
        data = s.ConnectionIn(data=request.data)
        data.is_valid(raise_exception=True)
        connection = services.connection_create(workspace=workspace, actor=request.user, **data.validated_data)
        return Response(s.ConnectionOut(connection).data, status=status.HTTP_201_CREATED)


class ConnectionDetail(APIView):
    @extend_schema(responses=s.ConnectionOut)
    def get(self, request, pk, connection_id):
        connection = self._connection(request, pk, connection_id, Role.VIEWER)
        return Response(s.ConnectionOut(connection).data)

    @extend_schema(request=s.ConnectionUpdateIn, responses=s.ConnectionOut)
    def patch(self, request, pk, connection_id):
        connection = self._connection(request, pk, connection_id, Role.OWNER)
        data = s.ConnectionUpdateIn(data=request.data, partial=True)
        data.is_valid(raise_exception=True)
        connection = services.connection_update(connection=connection, actor=request.user, **data.validated_data)
        return Response(s.ConnectionOut(connection).data)

    @extend_schema(responses={204: None})
    def delete(self, request, pk, connection_id):
        connection = self._connection(request, pk, connection_id, Role.OWNER)
        services.connection_delete(connection=connection, actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)

    @staticmethod
    def _connection(request, pk, connection_id, role) -> Connection:
        return connection_for_user(request.user, pk, connection_id, role)


class ModelList(APIView):
    """Models of all the workspace's connections; a catalog never fetched is fetched now."""

    @extend_schema(responses=s.ModelListOut)
    def get(self, request, pk):
        workspace = workspace_for_user(request.user, pk)
        models, errors = catalog.workspace_catalog(workspace)
        return Response(s.ModelListOut({"count": len(models), "results": models, "errors": errors}).data)


class ConnectionModelsRefresh(APIView):
    """Fetch a connection's catalog from its provider again (owner or editor); 502 with the reason when it fails."""

    @extend_schema(request=None, responses={200: s.ModelsRefreshedOut})
    def post(self, request, pk, connection_id):
        connection = connection_for_user(request.user, pk, connection_id, Role.EDITOR)
        try:
            models = catalog.connection_models_refresh(connection=connection)
        except ProviderError as exc:
            return Response({"detail": str(exc)}, status=status.HTTP_502_BAD_GATEWAY)
        data = {
            "connection": connection.name,
            "count": len(models),
            "models_fetched_at": connection.models_fetched_at,
            "results": [catalog.catalog_entry(connection, model) for model in models],
        }
        return Response(s.ModelsRefreshedOut(data).data)


class WorkerCheck(APIView):
    """Enqueue a health-check task; the page hears `worker.pong` on the workspace socket when a worker ran it."""

    @extend_schema(request=None, responses={202: None})
    def post(self, request, pk):
        workspace = workspace_for_user(request.user, pk, role=Role.EDITOR)  # it enqueues work: not for viewers
        tasks.worker_check.delay(workspace.pk)
        return Response({"queued": True}, status=status.HTTP_202_ACCEPTED)
