"""Input and output shapes of the inbox API."""

from rest_framework import serializers

from compare.api.serializers import OutputOut
from compare.models import CompareGroup

from ..inbox.selectors import InboxFilters


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


class InboxNextOut(serializers.Serializer):
    round = InboxRoundOut(allow_null=True, help_text="null when nothing is left to vote on")
    group = InboxGroupOut(allow_null=True)
    labels_visible = serializers.BooleanField()
    outputs = OutputOut(many=True, help_text="in the columns' order as you see them; keys 1–5 follow it")
    tally = InboxTallyOut(allow_null=True)
    blind = serializers.BooleanField()
    remaining = serializers.IntegerField(help_text="rounds still open to you under these filters, this one included")
    rule = serializers.CharField(help_text="how the inbox chose this round, in one sentence")


class InboxSkipOut(serializers.Serializer):
    round = serializers.IntegerField()
    skipped = serializers.BooleanField()


class InboxUndoOut(InboxNextOut):
    undone = serializers.ChoiceField(choices=["vote", "skip"], allow_null=True, help_text="what was taken back")
