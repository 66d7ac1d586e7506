"""Inbox API: my next round to vote on across a workspace, skip a round, undo my last vote or skip."""

from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from compare.access import round_for_user
from compare.api.groups import OutputOut
from compare.models import CompareGroup
from lab.access import workspace_for_user

from ..inbox import services
from ..inbox.selectors import InboxFilters, inbox_view


class InboxQueryIn(serializers.Serializer):
    group = serializers.IntegerField(required=False, min_value=1, help_text="only this comparison")
    author = serializers.CharField(required=False, help_text="only comparisons created by this username")
    model = serializers.CharField(required=False, help_text="only comparisons with a variant on this model id")
    blind = serializers.BooleanField(
        required=False, default=True, help_text="hide names and shuffle columns until you vote (default true)"
    )

    def validate_group(self, value: int) -> int:
        if not CompareGroup.objects.filter(pk=value, workspace=self.context["workspace"]).exists():
            raise serializers.ValidationError("No such comparison in this workspace.")
        return value

    def filters(self) -> InboxFilters:
        data = self.validated_data
        return InboxFilters(group=data.get("group"), author=data.get("author"), model=data.get("model"))


class InboxRoundIn(serializers.Serializer):
    round = serializers.IntegerField(min_value=1)
    blind = serializers.BooleanField(required=False, default=True, help_text="as in the next round's query")


class InboxGroupOut(serializers.Serializer):
    id = serializers.IntegerField()
    title = serializers.CharField()
    blind = serializers.BooleanField(help_text="the comparison's own blind mode")


class InboxRoundOut(serializers.Serializer):
    id = serializers.IntegerField()
    number = serializers.IntegerField()
    status = serializers.CharField()


class InboxTallyOut(serializers.Serializer):
    outputs = serializers.DictField(
        child=serializers.IntegerField(), required=False, help_text="votes per output id; absent while names are hidden"
    )
    tie = serializers.IntegerField(required=False)
    all_bad = serializers.IntegerField(required=False)
    total = serializers.IntegerField()


class InboxInputOut(serializers.Serializer):
    variables = serializers.DictField(help_text="the round's variables (shared ones and its dataset row), as run")
    system_prompt = serializers.CharField(
        allow_null=True, help_text="the system prompt every answer was sent; null when they differ"
    )
    prompt = serializers.CharField(allow_null=True, help_text="the prompt every answer was sent; null when they differ")
    own_prompts = serializers.BooleanField(
        help_text="the answers were sent prompts of their own: each output's, once names are shown"
    )


class InboxEarlierAnswerOut(serializers.Serializer):
    turn = serializers.IntegerField()
    answer = serializers.CharField(help_text="this column's own answer in that turn, as text")


class InboxOutputOut(OutputOut):
    earlier = InboxEarlierAnswerOut(
        source="earlier_answers",
        many=True,
        read_only=True,
        help_text="on a later turn, this column's own earlier answers, first turn first (never another column's)",
    )

    class Meta(OutputOut.Meta):
        fields = [*OutputOut.Meta.fields, "earlier"]


class InboxAskedOut(serializers.Serializer):
    turn = serializers.IntegerField()
    text = serializers.CharField(
        allow_null=True,
        help_text="what every column was asked in that turn: the first prompt (null when each column had its own, "
        "which would say which is which) or your follow-up",
    )


class InboxConversationOut(serializers.Serializer):
    turn = serializers.IntegerField(help_text="this round's turn in its conversation (2 or more)")
    asked = InboxAskedOut(many=True, help_text="the earlier turns' user messages, shared by every column")
    message = serializers.CharField(help_text="this turn's follow-up, which every column answered")
    voted = serializers.BooleanField(help_text="you have voted on the whole conversation")
    vote_choice = serializers.CharField(allow_null=True, help_text="your conversation vote: winner, tie or all_bad")
    vote_output = serializers.IntegerField(
        allow_null=True, help_text="the answer of this turn in the column your conversation vote picked"
    )


class InboxNextOut(serializers.Serializer):
    round = InboxRoundOut(allow_null=True, help_text="null when nothing is left to vote on")
    group = InboxGroupOut(allow_null=True)
    labels_visible = serializers.BooleanField()
    outputs = InboxOutputOut(many=True, help_text="in the columns' order as you see them; keys 1–5 follow it")
    input = InboxInputOut(allow_null=True, help_text="what the answers were asked, as blind mode lets you see it")
    tally = InboxTallyOut(allow_null=True)
    conversation = InboxConversationOut(
        allow_null=True,
        help_text="on a later turn of a conversation, what was said before (each output's `earlier` has its own "
        "earlier answers); null on a first turn. Vote on the whole at POST /api/v1/rounds/{id}/conversation-vote/",
    )
    blind = serializers.BooleanField()
    remaining = serializers.IntegerField(help_text="rounds still open to you under these filters, this one included")
    rule = serializers.CharField(help_text="how the inbox chose this round, in one sentence")


class InboxSkipOut(serializers.Serializer):
    round = serializers.IntegerField()
    skipped = serializers.BooleanField()


class InboxUndoOut(InboxNextOut):
    undone = serializers.ChoiceField(choices=["vote", "skip"], allow_null=True, help_text="what was taken back")


def _view_data(view: dict, serializer=InboxNextOut, **extra) -> dict:
    return serializer({**view, **extra}, context={"labels_visible": view["labels_visible"]}).data


def _workspace_round(request, workspace):
    """The round named in the body, if it belongs to this workspace (404 otherwise, like any other's object)."""
    body = InboxRoundIn(data=request.data)
    body.is_valid(raise_exception=True)
    round_ = round_for_user(request.user, body.validated_data["round"])
    if round_.group.workspace_id != workspace.pk:
        raise Http404("No such round.")
    return round_, body.validated_data["blind"]


class InboxNext(APIView):
    @extend_schema(parameters=[InboxQueryIn], responses=InboxNextOut, operation_id="inbox_next")
    def get(self, request, pk):
        workspace = workspace_for_user(request.user, pk)  # viewers vote too
        query = InboxQueryIn(data=request.query_params, context={"workspace": workspace})
        query.is_valid(raise_exception=True)
        filters, blind = query.filters(), query.validated_data["blind"]
        round_ = services.inbox_serve(workspace=workspace, user=request.user, filters=filters, blind=blind)
        view = inbox_view(round_, request.user, workspace=workspace, filters=filters, blind=blind)
        return Response(_view_data(view))


class InboxSkip(APIView):
    @extend_schema(request=InboxRoundIn, responses=InboxSkipOut, operation_id="inbox_skip")
    def post(self, request, pk):
        workspace = workspace_for_user(request.user, pk)
        round_, _ = _workspace_round(request, workspace)
        services.inbox_skip(round=round_, user=request.user)
        return Response(InboxSkipOut({"round": round_.pk, "skipped": True}).data)


class InboxUndo(APIView):
    @extend_schema(request=InboxRoundIn, responses=InboxUndoOut, operation_id="inbox_undo")
    def post(self, request, pk):
        workspace = workspace_for_user(request.user, pk)
        round_, blind = _workspace_round(request, workspace)
        undone = services.inbox_undo(round=round_, user=request.user, blind=blind)
        view = inbox_view(round_, request.user, workspace=workspace, filters=InboxFilters(), blind=blind)
        return Response(_view_data(view, InboxUndoOut, undone=undone))
