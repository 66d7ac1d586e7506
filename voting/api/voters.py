"""Voter-quality API: each voter's figures and flags, and owners' exclusions from the statistics."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from lab.access import membership_for_user, workspace_for_user
from lab.models import Role

from ..voters import services
from ..voters.selectors import voter_quality_for

Figure = {"allow_null": True}


class AgreementOut(serializers.Serializer):
    rounds = serializers.IntegerField(help_text="rounds compared (for the majority: rounds where the others had one)")
    agreed = serializers.IntegerField()
    share = serializers.FloatField(**Figure)
    share_low = serializers.FloatField(**Figure)
    share_high = serializers.FloatField(**Figure)
    kappa = serializers.FloatField(**Figure, help_text="Cohen's kappa")
    kappa_low = serializers.FloatField(**Figure, help_text="95% large-sample interval")
    kappa_high = serializers.FloatField(**Figure)


class PositionOut(serializers.Serializer):
    picks = serializers.IntegerField(help_text="blind votes that named a winner")
    first = serializers.IntegerField(help_text="picks of the first column as shown")
    last = serializers.IntegerField(help_text="picks of the last column as shown")
    chance_first = serializers.FloatField(**Figure, help_text="the first column's share expected by chance")
    p_value = serializers.FloatField(**Figure, help_text="exact binomial test of first against last picks at 50/50")


class SpeedOut(serializers.Serializer):
    timed = serializers.IntegerField(help_text="votes timed from when the inbox showed the round")
    fast = serializers.IntegerField(help_text="of those, faster than threshold_wps words of the answers a second")
    threshold_wps = serializers.FloatField()
    median_wps = serializers.FloatField(**Figure)


class OutlierOut(serializers.Serializer):
    votes = serializers.IntegerField(help_text="votes on comparisons others voted on too")
    statistic = serializers.FloatField(**Figure, help_text="Fisher's chi-square statistic")
    p_value = serializers.FloatField(**Figure, help_text="Fisher's combined p of how rare each choice was")
    threshold = serializers.FloatField(help_text="0.01 divided by the voters tested (Bonferroni)")


class FlagOut(serializers.Serializer):
    kind = serializers.CharField(help_text="outlier, too_fast, position or disagrees")
    evidence = serializers.CharField()


class QualityOut(serializers.Serializer):
    votes = serializers.IntegerField()
    agreement_with_majority = AgreementOut()
    agreement_with_judge = AgreementOut()
    position_preference = PositionOut()
    speed = SpeedOut()
    outlier = OutlierOut(help_text="Chatbot Arena's anomalous-voter test")
    flags = FlagOut(many=True)


class VoterOut(QualityOut):
    user = serializers.IntegerField()
    username = serializers.CharField()
    excluded = serializers.BooleanField(help_text="left out of the workspace's statistics by an owner")
    exclusion_reason = serializers.CharField(allow_null=True)


class VoterQualityOut(serializers.Serializer):
    workspace = serializers.IntegerField()
    voters = VoterOut(many=True, help_text="every voter for owners; only yourself otherwise")
    overall = QualityOut(help_text="the workspace's votes pooled")


class ExclusionIn(serializers.Serializer):
    reason = serializers.CharField(max_length=300, help_text="printed in every report that leaves the votes out")


class ExclusionOut(serializers.Serializer):
    user = serializers.IntegerField()
    reason = serializers.CharField()


class VoterQuality(APIView):
    @extend_schema(responses=VoterQualityOut, operation_id="voter_quality")
    def get(self, request, pk):
        quality = voter_quality_for(membership_for_user(request.user, pk))
        return Response(VoterQualityOut(quality).data)


class VoterExclusion(APIView):
    @extend_schema(request=ExclusionIn, responses=ExclusionOut, operation_id="voter_exclude")
    def put(self, request, pk, user_id):
        workspace = workspace_for_user(request.user, pk, Role.OWNER)  # a stranger's 404 comes before the role
        body = ExclusionIn(data=request.data)
        body.is_valid(raise_exception=True)
        exclusion = services.voter_exclude(
            workspace=workspace, user_id=user_id, reason=body.validated_data["reason"], by=request.user
        )
        return Response(ExclusionOut({"user": exclusion.user_id, "reason": exclusion.reason}).data)

    @extend_schema(responses={204: None}, operation_id="voter_readmit")
    def delete(self, request, pk, user_id):
        workspace = workspace_for_user(request.user, pk, Role.OWNER)
        services.voter_readmit(workspace=workspace, user_id=user_id)
        return Response(status=status.HTTP_204_NO_CONTENT)
