"""Input and output serializers of the judging API. Inputs check shapes and types; services check the rules."""

from rest_framework import serializers

from lab.api.inputs import StrictIn

from ..classification import JudgeKind
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
    lenient_replies = serializers.BooleanField(
        required=False, default=False, help_text="read the largest JSON object in a reply (strict by default)"
    )
    kind = serializers.ChoiceField(choices=JudgeKind.choices, required=False, default=JudgeKind.RUBRIC)
    classification = serializers.DictField(
        required=False,
        default=dict,
        help_text="for a classification kind: criteria; binary: target, non_target; multiclass: categories "
        "[{name, description}]; uncertainty (unknown, target, non_target), include_reasoning, include_score",
    )
    input_columns = serializers.ListField(
        child=serializers.CharField(max_length=60),
        required=False,
        default=list,
        max_length=20,
        help_text="dataset columns shown to a classification judge (and usable as {{column}} in its criteria)",
    )


class RoundJudgeIn(StrictIn):
    judge = serializers.IntegerField(required=False, allow_null=True, help_text="default: the comparison's judge")


class GroupJudgeIn(StrictIn):
    judge = serializers.IntegerField(allow_null=True, help_text="null: judge no round automatically")
    allow_same_family = serializers.BooleanField(
        required=False,
        default=False,
        help_text="judge even though the judge shares a model family with a variant; the override is recorded",
    )


# --- Output ---


class JudgeOut(serializers.ModelSerializer):
    class Meta:
        model = JudgeConfig
        fields = [
            "id",
            "workspace",
            "name",
            "model",
            "scale",
            "mode",
            "metrics",
            "prompt",
            "seed",
            "lenient_replies",
            "kind",
            "classification",
            "input_columns",
            "created_at",
        ]


class VerdictOutputOut(serializers.ModelSerializer):
    output = serializers.IntegerField(source="output_id")

    class Meta:
        model = VerdictOutput
        fields = ["output", "letter", "judged", "skip_reason", "score", "rank", "scores", "category"]


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
    first_favoured = serializers.IntegerField(help_text="flips where the answer shown first won in both orders")
    second_favoured = serializers.IntegerField(help_text="flips where the answer shown second won in both orders")
    tie_changes = serializers.IntegerField(help_text="flips to or from a tie: no direction")
    p_value = serializers.FloatField(
        allow_null=True, help_text="exact sign test, first vs second; null without such flips"
    )
    favoured = serializers.ChoiceField(choices=["first", "second"], allow_null=True)


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
