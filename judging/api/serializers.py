"""Input and output serializers of the judging API. Inputs check shapes and types; services check the rules."""

from rest_framework import serializers

from lab.api.inputs import StrictIn

from ..models import JudgeConfig, Verdict, VerdictOutput
from ..rubric import MAX_METRICS, JudgeMode, Scale
from ..services import MAX_SEED

# --- Input ---


class MetricIn(StrictIn):
    name = serializers.CharField(max_length=60)
    weight = serializers.FloatField(min_value=0, max_value=100)
    low = serializers.CharField(max_length=500)
    high = serializers.CharField(max_length=500)


class JudgeIn(StrictIn):
    name = serializers.CharField(max_length=120)
    model = serializers.CharField(max_length=300, help_text="`<connection>::<model>`")
    scale = serializers.ChoiceField(choices=Scale.choices, required=False, default=Scale.ONE_TO_FIVE)
    mode = serializers.ChoiceField(choices=JudgeMode.choices, required=False, default=JudgeMode.RELATIVE)
    metrics = MetricIn(many=True, required=False, max_length=MAX_METRICS, help_text="default: a rubric of five")
    prompt = serializers.CharField(
        max_length=20_000, required=False, allow_blank=True, trim_whitespace=False, default=""
    )
    seed = serializers.IntegerField(min_value=0, max_value=MAX_SEED - 1, required=False, allow_null=True)


class RoundJudgeIn(StrictIn):
    judge = serializers.IntegerField(required=False, allow_null=True, help_text="default: the comparison's judge")


class GroupJudgeIn(StrictIn):
    judge = serializers.IntegerField(allow_null=True, help_text="null: judge no round automatically")


# --- Output ---


class JudgeOut(serializers.ModelSerializer):
    class Meta:
        model = JudgeConfig
        fields = ["id", "workspace", "name", "model", "scale", "mode", "metrics", "prompt", "seed", "created_at"]


class VerdictOutputOut(serializers.ModelSerializer):
    output = serializers.IntegerField(source="output_id")

    class Meta:
        model = VerdictOutput
        fields = ["output", "letter", "judged", "skip_reason", "score", "rank", "scores"]


class VerdictOut(serializers.ModelSerializer):
    round = serializers.IntegerField(source="round_id")
    judge = serializers.IntegerField(source="judge_id", allow_null=True)
    winner = serializers.IntegerField(source="winner_id", allow_null=True)
    outputs = VerdictOutputOut(many=True, read_only=True)
    cost = serializers.FloatField(allow_null=True)

    class Meta:
        model = Verdict
        fields = [
            "id",
            "round",
            "judge",
            "judge_name",
            "judge_model",
            "scale",
            "mode",
            "status",
            "winner",
            "tie",
            "decided_by",
            "seed",
            "letters",
            "weights",
            "missing_metrics",
            "skipped",
            "pairs",
            "calls",
            "judge_calls",
            "input_tokens",
            "output_tokens",
            "cost",
            "error",
            "created_at",
            "finished_at",
            "outputs",
        ]


class RoundVerdictsOut(serializers.Serializer):
    hidden = serializers.BooleanField(help_text="blind mode before you voted: verdicts are shown after your vote")
    verdicts = VerdictOut(many=True)


class PositionBiasOut(serializers.Serializer):
    judgements = serializers.IntegerField()
    flipped = serializers.IntegerField()
    share = serializers.FloatField(allow_null=True)


class VerbosityOut(serializers.Serializer):
    answers = serializers.IntegerField()
    rho = serializers.FloatField(allow_null=True)
    p_value = serializers.FloatField(allow_null=True)


class DiagnosticsOut(serializers.Serializer):
    verdicts = serializers.IntegerField()
    failed = serializers.IntegerField()
    ties = serializers.IntegerField()
    position_bias = PositionBiasOut()
    verbosity = VerbosityOut()
    calls = serializers.IntegerField()
    cost = serializers.FloatField(allow_null=True)
