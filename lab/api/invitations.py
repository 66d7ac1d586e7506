"""Invitation API for owners: list a workspace's invitations, make one (the link is in this response only, and
mailed when an address is given), revoke one. Thin: the rules are in lab.invitations.services."""

from drf_spectacular.utils import extend_schema
from rest_framework import generics, serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from ..access import invitation_for_user, workspace_for_user
from ..invitations.models import Invitation, InvitationState
from ..invitations.services import invitation_create, invitation_revoke
from ..models import Role
from .inputs import StrictIn


class InvitationIn(StrictIn):
    email = serializers.EmailField(required=False, allow_blank=True)
    role = serializers.ChoiceField(choices=Role.choices)
    days = serializers.IntegerField(required=False, min_value=1, max_value=90)


class InvitationOut(serializers.ModelSerializer):
    state = serializers.ChoiceField(choices=InvitationState.choices, read_only=True)
    created_by = serializers.CharField(source="created_by.username", default=None)

    class Meta:
        model = Invitation
        fields = ["id", "email", "role", "state", "created_by", "created_at", "expires_at", "accepted_at", "revoked_at"]


class InvitationCreatedOut(InvitationOut):
    link = serializers.CharField(help_text="Shown in this response only; it is not stored.")

    class Meta(InvitationOut.Meta):
        fields = [*InvitationOut.Meta.fields, "link"]


class InvitationList(generics.GenericAPIView):
    serializer_class = InvitationOut

    @extend_schema(operation_id="invitations_list", responses=InvitationOut(many=True))
    def get(self, request, pk):
        workspace = workspace_for_user(request.user, pk, role=Role.OWNER)
        page = self.paginate_queryset(workspace.invitations.select_related("created_by"))
        return self.get_paginated_response(InvitationOut(page, many=True).data)

    @extend_schema(request=InvitationIn, responses={201: InvitationCreatedOut})
    def post(self, request, pk):
        workspace = workspace_for_user(request.user, pk, role=Role.OWNER)
        data = InvitationIn(data=request.data)
        data.is_valid(raise_exception=True)
        invitation, link = invitation_create(
            workspace=workspace, actor=request.user, base_url=request.build_absolute_uri("/"), **data.validated_data
        )
        invitation.link = link
        return Response(InvitationCreatedOut(invitation).data, status=status.HTTP_201_CREATED)


class InvitationDetail(APIView):
    @extend_schema(request=None, responses={200: InvitationOut})
    def delete(self, request, pk, invitation_id):
        invitation = invitation_for_user(request.user, pk, invitation_id)
        return Response(InvitationOut(invitation_revoke(invitation=invitation, actor=request.user)).data)
