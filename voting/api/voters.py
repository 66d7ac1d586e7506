"""Voter-quality API: each voter's figures and flags, and owners' exclusions from the statistics."""

from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from lab.access import membership_for_user, workspace_for_user
from lab.models import Role

from ..voters import services
from ..voters.selectors import voter_quality_for
from . import voter_serializers as s


class VoterQuality(APIView):
    @extend_schema(responses=s.VoterQualityOut, operation_id="voter_quality")
    def get(self, request, pk):
        quality = voter_quality_for(membership_for_user(request.user, pk))
        return Response(s.VoterQualityOut(quality).data)


class VoterExclusion(APIView):
    @extend_schema(request=s.ExclusionIn, responses=s.ExclusionOut, operation_id="voter_exclude")
    def put(self, request, pk, user_id):
        workspace = workspace_for_user(request.user, pk, Role.OWNER)  # a stranger's 404 comes before the role
        body = s.ExclusionIn(data=request.data)
        body.is_valid(raise_exception=True)
        exclusion = services.voter_exclude(
            workspace=workspace, user_id=user_id, reason=body.validated_data["reason"], by=request.user
        )
        return Response(s.ExclusionOut({"user": exclusion.user_id, "reason": exclusion.reason}).data)

    @extend_schema(responses={204: None}, operation_id="voter_readmit")
    def delete(self, request, pk, user_id):
        workspace = workspace_for_user(request.user, pk, Role.OWNER)
        services.voter_readmit(workspace=workspace, user_id=user_id)
        return Response(status=status.HTTP_204_NO_CONTENT)
