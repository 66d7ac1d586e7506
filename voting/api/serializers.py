"""Input and output shapes of the voting API."""

from rest_framework import serializers

from lab.api.inputs import StrictIn

from ..models import Choice, Vote


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
    outputs = serializers.DictField(child=serializers.IntegerField(), help_text="votes per output id")
    tie = serializers.IntegerField()
    all_bad = serializers.IntegerField()
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
