"""Voting API: cast my vote on a round, read my vote and the tally."""

from drf_spectacular.utils import extend_schema
from rest_framework.response import Response
from rest_framework.views import APIView

from compare.access import round_for_user
from lab.realtime import deliveries

from .. import services
from ..models import Vote
from ..selectors import round_tally, vote_of
from . import serializers as s

LIVE_DELAYED = "Your vote is saved. Live updates are delayed: others see it when their page reloads or reconnects."


def votes_payload(round, vote: Vote | None) -> dict:
    return s.RoundVotesOut({"vote": vote, "tally": round_tally(round)}).data


class RoundVote(APIView):
    @extend_schema(responses=s.RoundVotesOut, operation_id="round_votes_retrieve")
    def get(self, request, pk):
        round = round_for_user(request.user, pk)
        return Response(votes_payload(round, vote_of(round, request.user)))

    @extend_schema(request=s.VoteIn, responses=s.VoteCastOut)
    def post(self, request, pk):
        round = round_for_user(request.user, pk)  # viewers vote too
        data = s.VoteIn(data=request.data)
        data.is_valid(raise_exception=True)
        with deliveries() as live:  # the tally's broadcast runs when the vote commits, inside this block
            vote = services.vote_cast(
                round=round,
                user=request.user,
                output_id=data.validated_data.get("output"),
                verdict=data.validated_data.get("verdict"),
            )
        payload = votes_payload(round, vote)  # the vote just cast: no second read of it
        if live.delayed:
            return Response({**payload, "live": "delayed", "detail": LIVE_DELAYED})
        return Response({**payload, "live": "sent"})
