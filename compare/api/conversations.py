"""Conversations API: continue a finished round with a follow-up message (the next turn, every column its own).

`POST /api/v1/rounds/{id}/continue/` answers 202 with the new round as `GET /api/v1/rounds/{id}/` shows it; a
round that has not finished is a conflict with its state (409), a missing or empty message a 400 on `message`.
The rules are compare/rounds/continuing.py's."""

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from lab.api.inputs import StrictIn

from ..access import round_for_user
from ..rounds.continuing import MAX_MESSAGE_CHARS, NotContinuable, round_continue
from .groups import RoundOut, round_detail


class ToolResultIn(StrictIn):
    output = serializers.IntegerField(help_text="the answer (output id) whose call this answers")
    tool_call_id = serializers.CharField(max_length=200)
    content = serializers.CharField(max_length=MAX_MESSAGE_CHARS, allow_blank=True, trim_whitespace=False)


class ContinueIn(StrictIn):
    tool_results = ToolResultIn(
        many=True,
        required=False,
        default=list,
        max_length=500,
        help_text="A (mocked) result for each tool call of the answers continued; a column whose answer made calls "
        "needs one for every call. With results, `message` may be left out (docs/tools.md).",
    )
    message = serializers.CharField(
        max_length=MAX_MESSAGE_CHARS,
        required=False,
        allow_blank=True,
        default="",
        trim_whitespace=False,
        help_text="The follow-up every column is sent after its own earlier answers. Plain text, not a template: "
        "no {{variable}} is filled in.",
    )


class RoundContinue(APIView):
    @extend_schema(
        request=ContinueIn,
        responses={
            202: RoundOut,
            409: OpenApiResponse(description="The round has not finished (or no answer of it did): nothing to go on"),
        },
        description="Continue a finished round's conversation: a new round (`parent` = this round, `turn` = its "
        "turn + 1) in which every column is sent its own earlier messages, its own answer and `message`. A column "
        "whose answer did not finish is not continued; its output says why. Continuing a round again makes a "
        "branch. See docs/conversations.md.",
    )
    def post(self, request, pk):
        parent = round_for_user(request.user, pk, write=True)
        data = ContinueIn(data=request.data)
        data.is_valid(raise_exception=True)
        try:
            turn = round_continue(
                round=parent,
                user=request.user,
                message=data.validated_data["message"],
                tool_results=data.validated_data["tool_results"],
            )
        except NotContinuable as exc:
            return Response(exc.message_dict, status=status.HTTP_409_CONFLICT)
        return Response(round_detail(turn, request), status=status.HTTP_202_ACCEPTED)
