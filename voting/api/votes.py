"""Voting API: cast my vote on a round, read my vote and the tally."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from compare.access import round_for_user
from compare.blind import labels_visible, tally_as_seen
from lab.api.inputs import StrictIn
from lab.realtime import deliveries

from .. import services
from ..models import Choice, Vote
from ..selectors import round_tally, vote_of


class VoteIn(StrictIn):
    output = serializers.IntegerField(required=False, min_value=1)
    verdict = serializers.ChoiceField(choices=[Choice.TIE, Choice.ALL_BAD], required=False)

    def validate(self, data):
        if ("output" in data) == ("verdict" in data):
            raise serializers.ValidationError("Send either 'output' (the winning answer's id) or 'verdict'.")
        return data


class VoteOut(serializers.ModelSerializer):
    class Meta:
        model = Vote
        fields = ["id", "round", "choice", "output", "updated_at"]


class TallyOut(serializers.Serializer):
    outputs = serializers.DictField(
        child=serializers.IntegerField(),
        required=False,
        help_text="votes per output id; absent in blind mode until you have voted on the round",
    )
    tie = serializers.IntegerField(required=False, help_text="absent in blind mode until you have voted")
    all_bad = serializers.IntegerField(required=False, help_text="absent in blind mode until you have voted")
    total = serializers.IntegerField()


class RoundVotesOut(serializers.Serializer):
    vote = VoteOut(allow_null=True)
    tally = TallyOut()


class VoteCastOut(RoundVotesOut):
    live = serializers.ChoiceField(
        choices=["sent", "delayed"],
        help_text="'delayed': the vote is saved, but the live update to open pages could not be sent now "
        "(the realtime service is unavailable); they show it when they reload or reconnect.",
    )
    detail = serializers.CharField(required=False, help_text="what 'delayed' means, in a sentence for people")


LIVE_DELAYED = "Your vote is saved. Live updates are delayed: others see it when their page reloads or reconnects."


def votes_payload(round, user, vote: Vote | None) -> dict:
    """My vote and the tally as I may see it (blind mode: the total only until I have voted)."""
    tally = tally_as_seen(round_tally(round), labels_visible=labels_visible(round, user))
    return RoundVotesOut({"vote": vote, "tally": tally}).data


class RoundVote(APIView):
    @extend_schema(responses=RoundVotesOut, operation_id="round_votes_retrieve")
    def get(self, request, pk):
        round = round_for_user(request.user, pk)
        return Response(votes_payload(round, request.user, vote_of(round, request.user)))

    @extend_schema(request=VoteIn, responses=VoteCastOut)
    def post(self, request, pk):
        round = round_for_user(request.user, pk)  # viewers vote too
        data = VoteIn(data=request.data)
        data.is_valid(raise_exception=True)
        with deliveries() as live:  # the tally's broadcast runs when the vote commits, inside this block
            vote = services.vote_cast(
                round=round,
                user=request.user,
                output_id=data.validated_data.get("output"),
                verdict=data.validated_data.get("verdict"),
            )
        payload = votes_payload(round, request.user, vote)  # the vote just cast: no second read of it
        if live.delayed:
            return Response({**payload, "live": "delayed", "detail": LIVE_DELAYED})
        return Response({**payload, "live": "sent"})
