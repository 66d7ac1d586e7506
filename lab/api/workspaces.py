"""Workspaces API: my workspaces (list, create, read) and a workspace's members (owners add, change and remove them).
Its In/Out serializers, then the views; thin: access + service."""

from django.db.models import F
from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from .. import services
from ..access import member_for_user, workspace_for_user
from ..models import Membership, Role, Workspace
from .inputs import StrictIn


class WorkspaceIn(StrictIn):
    name = serializers.CharField(max_length=120)


class MemberIn(StrictIn):
    username = serializers.CharField(max_length=150)
    role = serializers.ChoiceField(choices=Role.choices)


class MemberRoleIn(StrictIn):
    role = serializers.ChoiceField(choices=Role.choices)


class WorkspaceOut(serializers.ModelSerializer):
    role = serializers.SerializerMethodField()

    class Meta:
        model = Workspace
        fields = ["id", "name", "role", "created_at"]

    def get_role(self, workspace: Workspace) -> str:
        return getattr(workspace, "my_role", None) or workspace.memberships.get(user=self.context["request"].user).role


class MemberOut(serializers.ModelSerializer):
    username = serializers.CharField(source="user.username")

    class Meta:
        model = Membership
        fields = ["id", "user_id", "username", "role", "created_at"]


class WorkspaceList(generics.GenericAPIView):
    serializer_class = WorkspaceOut

    def get_queryset(self):
        return Workspace.objects.filter(memberships__user=self.request.user).annotate(my_role=F("memberships__role"))

    @extend_schema(operation_id="workspaces_list", responses=WorkspaceOut(many=True))
    def get(self, request):
        page = self.paginate_queryset(self.get_queryset())
        return self.get_paginated_response(WorkspaceOut(page, many=True, context={"request": request}).data)

    @extend_schema(request=WorkspaceIn, responses={201: WorkspaceOut})
    def post(self, request):
        data = WorkspaceIn(data=request.data)
        data.is_valid(raise_exception=True)
        workspace = services.workspace_create(owner=request.user, name=data.validated_data["name"])
        return Response(WorkspaceOut(workspace, context={"request": request}).data, status=status.HTTP_201_CREATED)


class WorkspaceDetail(APIView):
    @extend_schema(responses=WorkspaceOut)
    def get(self, request, pk):
        workspace = workspace_for_user(request.user, pk)
        return Response(WorkspaceOut(workspace, context={"request": request}).data)


class MemberList(generics.GenericAPIView):
    serializer_class = MemberOut

    @extend_schema(operation_id="members_list", responses=MemberOut(many=True))
    def get(self, request, pk):
        workspace = workspace_for_user(request.user, pk)
        page = self.paginate_queryset(
            Membership.objects.filter(workspace=workspace).select_related("user").order_by("id")
        )
        return self.get_paginated_response(MemberOut(page, many=True).data)

    @extend_schema(request=MemberIn, responses={201: MemberOut})
    def post(self, request, pk):
        workspace = workspace_for_user(request.user, pk, role=Role.OWNER)
        data = MemberIn(data=request.data)
        data.is_valid(raise_exception=True)
        membership = services.membership_add(workspace=workspace, actor=request.user, **data.validated_data)
        return Response(MemberOut(membership).data, status=status.HTTP_201_CREATED)


class MemberDetail(APIView):
    """An owner changes a member's role (PATCH) or removes them (DELETE); the member's tokens lose it at once."""

    @extend_schema(request=MemberRoleIn, responses=MemberOut)
    def patch(self, request, pk, user_id):
        membership = member_for_user(request.user, pk, user_id)
        data = MemberRoleIn(data=request.data)
        data.is_valid(raise_exception=True)
        membership = services.membership_add(
            workspace=membership.workspace, username=membership.user.username, actor=request.user, **data.validated_data
        )
        return Response(MemberOut(membership).data)

    @extend_schema(responses={204: None})
    def delete(self, request, pk, user_id):
        services.membership_remove(membership=member_for_user(request.user, pk, user_id), actor=request.user)
        return Response(status=status.HTTP_204_NO_CONTENT)
