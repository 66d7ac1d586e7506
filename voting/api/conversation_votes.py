"""Conversation votes API: cast or read my vote on the whole conversation a later turn belongs to."""

from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from compare.access import round_for_user

from ..conversation_counts import TURN_COUNTING, conversation_vote_of
from ..conversation_votes import conversation_vote_cast
from ..models import ConversationVote
from .votes import VoteIn


class ConversationVoteOut(serializers.ModelSerializer):
    class Meta:
        model = ConversationVote
        fields = ["id", "root", "turn", "choice", "output", "updated_at"]


class MyConversationVoteOut(serializers.Serializer):
    vote = ConversationVoteOut(allow_null=True)
    counting = serializers.CharField(help_text="how the reports count turns and conversation votes")


class ConversationVoteView(APIView):
    @extend_schema(responses=MyConversationVoteOut, operation_id="round_conversation_vote_retrieve")
    def get(self, request, pk):
        round_ = round_for_user(request.user, pk)
        return Response(
            MyConversationVoteOut({"vote": conversation_vote_of(round_, request.user), "counting": TURN_COUNTING}).data
        )

    @extend_schema(
        request=VoteIn,
        responses=MyConversationVoteOut,
        description="Vote on the whole conversation this later turn belongs to: `output` (an answer of this turn) "
        "names the column whose conversation was best, or `verdict` is tie or all_bad. One vote per person per "
        "conversation; voting again replaces it. Counted apart from the per-turn votes (docs/conversations.md).",
    )
    def post(self, request, pk):
        round_ = round_for_user(request.user, pk)  # viewers vote too
        data = VoteIn(data=request.data)
        data.is_valid(raise_exception=True)
        vote = conversation_vote_cast(
            round=round_,
            user=request.user,
            output_id=data.validated_data.get("output"),
            verdict=data.validated_data.get("verdict"),
        )
        return Response(MyConversationVoteOut({"vote": vote, "counting": TURN_COUNTING}).data)
