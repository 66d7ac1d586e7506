"""The report's per-variant figures (voting.reports.variant_figures) as the API returns them: mean and spread of
latency, output tokens and cost, and how consistent each variant's answers were."""

from rest_framework import serializers


class SpreadOut(serializers.Serializer):
    n = serializers.IntegerField(help_text="answers with this figure")
    mean = serializers.FloatField(allow_null=True)
    sd = serializers.FloatField(allow_null=True, help_text="sample standard deviation (n − 1); null below two")
    min = serializers.FloatField(allow_null=True)
    max = serializers.FloatField(allow_null=True)


class AnswerGroupOut(serializers.Serializer):
    count = serializers.IntegerField(help_text="times this answer was given")
    share = serializers.FloatField()
    text = serializers.CharField(help_text="the answer (its first 200 characters)")
    cut = serializers.BooleanField(help_text="the text above is cut short")


class ConsistencyOut(serializers.Serializer):
    answers = serializers.IntegerField()
    distinct = serializers.IntegerField(help_text="different answers among them (surrounding whitespace aside)")
    groups = AnswerGroupOut(many=True, help_text="identical answers together, the most frequent first")


class VariantFiguresOut(serializers.Serializer):
    variant = serializers.CharField(help_text="variant key: the variant's id")
    label = serializers.CharField()
    model = serializers.CharField()
    answers = serializers.IntegerField(help_text="complete answers the figures are over")
    latency_ms = SpreadOut()
    output_tokens = SpreadOut()
    cost = SpreadOut(allow_null=True, help_text="USD per answer, over those of known price; null when none has one")
    unpriced = serializers.IntegerField(help_text="answers whose price is unknown: not in `cost`")
    consistency = ConsistencyOut()
