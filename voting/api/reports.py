"""Report and leaderboard API: a comparison's statistics and a workspace's ratings, as JSON or CSV (`?format=csv`).

Both are read from the cache (voting.reports.cache), which a new vote or verdict invalidates. The In serializers are the
query parameters; the Out ones name every field the statistics module returns (responses pass through them, so the
schema at /api/schema/ is what clients get).
"""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from compare.access import group_for_user
from compare.models import CompareGroup
from lab.access import workspace_for_user

from ..conversation_counts import TURN_COUNTING
from ..reports.cache import cached_group_report, cached_leaderboard
from ..reports.comparison import DEFAULT_PASS_THRESHOLD
from ..reports.leaderboard import By, LeaderboardFilters
from ..reports.variant_figures import group_variant_figures
from .csv_export import CSVRenderer, leaderboard_rows, report_rows
from .variant_figures import VariantFiguresOut

Interval = {"allow_null": True}  # bounds and estimates are null until there is data for them


class ReportQueryIn(serializers.Serializer):
    pass_threshold = serializers.FloatField(
        required=False,
        default=DEFAULT_PASS_THRESHOLD,
        min_value=0,
        max_value=1,
        help_text="a judge score (0–1) at or above this counts as a pass in the success-rate A/B",
    )


class LeaderboardQueryIn(serializers.Serializer):
    by = serializers.ChoiceField(choices=By.choices, default=By.MODEL, help_text="rate models or prompt versions")
    since = serializers.DateField(required=False, help_text="votes cast on or after this date (UTC)")
    until = serializers.DateField(required=False, help_text="votes cast on or before this date (UTC)")
    author = serializers.CharField(required=False, help_text="only comparisons created by this username")
    group = serializers.IntegerField(required=False, min_value=1, help_text="only this comparison")

    def validate_group(self, value: int) -> int:
        if not CompareGroup.objects.filter(pk=value, workspace=self.context["workspace"]).exists():
            raise serializers.ValidationError("No such comparison in this workspace.")
        return value

    def validate(self, data):
        if data.get("since") and data.get("until") and data["since"] > data["until"]:
            raise serializers.ValidationError({"until": "The end date is before the start date."})
        return data

    def filters(self) -> LeaderboardFilters:
        data = self.validated_data
        return LeaderboardFilters(
            since=data.get("since"), until=data.get("until"), author=data.get("author"), group=data.get("group")
        )


class WinRateOut(serializers.Serializer):
    variant = serializers.CharField(help_text="variant key: the variant's id")
    label = serializers.CharField()
    appearances = serializers.IntegerField(help_text="votes on rounds that showed it")
    wins = serializers.IntegerField()
    losses = serializers.IntegerField()
    ties = serializers.IntegerField()
    all_bad = serializers.IntegerField()
    decisive = serializers.IntegerField(help_text="votes that showed it and named a winner")
    win_rate = serializers.FloatField(**Interval)
    ci_low = serializers.FloatField(**Interval)
    ci_high = serializers.FloatField(**Interval)


# The two variants a pair entry compares, keys and labels; each kind of pair adds its own figures. A comment, not a
# docstring: drf-spectacular would give the subclasses' schema components its text as their description.
class PairNamesOut(serializers.Serializer):
    a = serializers.CharField()
    b = serializers.CharField()
    a_label = serializers.CharField()
    b_label = serializers.CharField()


class PairOut(PairNamesOut):
    together = serializers.IntegerField()
    a_wins = serializers.IntegerField()
    b_wins = serializers.IntegerField()
    ties = serializers.IntegerField()
    decisive = serializers.IntegerField()
    a_share = serializers.FloatField(**Interval)
    ci_low = serializers.FloatField(**Interval)
    ci_high = serializers.FloatField(**Interval)
    verdict = serializers.CharField(help_text='"not enough data", "not significant" or "significant"')
    significant = serializers.BooleanField(help_text="by the fixed-sample sign test, Holm-adjusted")
    significant_always_valid = serializers.BooleanField(help_text="by the peek-safe p-value, Holm-adjusted")
    p_value = serializers.FloatField(**Interval)
    p_holm = serializers.FloatField(**Interval)
    p_always_valid = serializers.FloatField(**Interval)
    p_always_valid_holm = serializers.FloatField(**Interval)
    more_decisive_votes = serializers.IntegerField(allow_null=True)
    holm_divisor = serializers.IntegerField(
        help_text="the guidance is computed at α / holm_divisor: the level Holm's method would test this pair at, "
        "given how many other pairs are already significant"
    )
    more_votes = serializers.IntegerField(allow_null=True)
    always_valid_low = serializers.FloatField(
        **Interval,
        help_text="always-valid 95% interval for a's share (excludes 0.5 exactly when p_always_valid < 0.05)",
    )
    always_valid_high = serializers.FloatField(**Interval)
    other_wins = serializers.IntegerField(help_text="votes showing both that a third variant won")
    sentence = serializers.CharField()


class OverallOut(serializers.Serializer):
    wins = serializers.DictField(child=serializers.IntegerField())
    expected = serializers.DictField(child=serializers.FloatField())
    verdict = serializers.CharField()
    significant = serializers.BooleanField()
    statistic = serializers.FloatField(**Interval)
    df = serializers.IntegerField(allow_null=True)
    p_value = serializers.FloatField(**Interval)
    more_decisive_votes = serializers.IntegerField(allow_null=True)
    sentence = serializers.CharField()
    unseen = serializers.ListField(
        child=serializers.CharField(), help_text="variants not yet in a decisive vote while others are"
    )


class ScoreSummaryOut(serializers.Serializer):
    variant = serializers.CharField()
    label = serializers.CharField()
    n = serializers.IntegerField()
    mean = serializers.FloatField(**Interval)
    ci_low = serializers.FloatField(**Interval)
    ci_high = serializers.FloatField(**Interval)
    not_measured = serializers.CharField(allow_null=True, help_text="why there is no interval (every score the same)")


class ScorePairOut(PairNamesOut):
    n_pairs = serializers.IntegerField()
    n_nonzero = serializers.IntegerField()
    mean_difference = serializers.FloatField(**Interval)
    verdict = serializers.CharField()
    significant = serializers.BooleanField()
    p_value = serializers.FloatField(**Interval)
    p_holm = serializers.FloatField(**Interval)
    more_rounds = serializers.IntegerField(allow_null=True)
    holm_divisor = serializers.IntegerField(
        help_text="the guidance is computed at α / holm_divisor: the level Holm's method would test this pair at, "
        "given how many other pairs are already significant"
    )
    sentence = serializers.CharField()


class ScoresOut(serializers.Serializer):
    variants = ScoreSummaryOut(many=True)
    pairs = ScorePairOut(many=True)


class SuccessRateOut(serializers.Serializer):
    variant = serializers.CharField()
    label = serializers.CharField()
    successes = serializers.IntegerField()
    trials = serializers.IntegerField()
    rate = serializers.FloatField(**Interval)
    ci_low = serializers.FloatField(**Interval)
    ci_high = serializers.FloatField(**Interval)


class SuccessPairOut(PairNamesOut):
    successes_a = serializers.IntegerField()
    trials_a = serializers.IntegerField()
    successes_b = serializers.IntegerField()
    trials_b = serializers.IntegerField()
    difference = serializers.FloatField(**Interval)
    ci_low = serializers.FloatField(**Interval)
    ci_high = serializers.FloatField(**Interval)
    test = serializers.CharField(allow_null=True)
    verdict = serializers.CharField()
    significant = serializers.BooleanField()
    p_value = serializers.FloatField(**Interval)
    p_holm = serializers.FloatField(**Interval)
    more_runs = serializers.IntegerField(allow_null=True)
    more_runs_at_least = serializers.BooleanField(help_text="more_runs is for the z-test; Fisher's test needs more")
    holm_divisor = serializers.IntegerField(
        help_text="the guidance is computed at α / holm_divisor: the level Holm's method would test this pair at, "
        "given how many other pairs are already significant"
    )
    sentence = serializers.CharField()


class SuccessOut(serializers.Serializer):
    threshold = serializers.FloatField()
    variants = SuccessRateOut(many=True)
    pairs = SuccessPairOut(many=True)


class StatsReportOut(serializers.Serializer):
    """The statistics module's report (lab.stats.report.build_report), field for field."""

    alpha = serializers.FloatField()
    confidence = serializers.FloatField()
    minimum_decisive_per_pair = serializers.IntegerField()
    minimum_expected_wins = serializers.IntegerField()
    votes = serializers.IntegerField()
    decisive_votes = serializers.IntegerField()
    variants = WinRateOut(many=True)
    pairs = PairOut(many=True)
    overall = OverallOut()
    scores = ScoresOut(allow_null=True, help_text="judge scores; null until a judge has scored answers here")
    success = SuccessOut(allow_null=True, help_text="pass rates by judge score; null without judge scores")
    which_p_to_trust = serializers.CharField()
    summary = serializers.CharField()


class ReportVariantOut(serializers.Serializer):
    key = serializers.CharField()
    position = serializers.IntegerField()
    label = serializers.CharField()
    model = serializers.CharField()


class ReportGroupOut(serializers.Serializer):
    id = serializers.IntegerField()
    title = serializers.CharField()
    variants = ReportVariantOut(many=True)


class JudgeLeftOutOut(serializers.Serializer):
    rounds = serializers.IntegerField()
    without = serializers.ListField(child=serializers.CharField(), help_text="metrics these rounds were judged without")
    only_with = serializers.ListField(child=serializers.CharField(), help_text="metrics only these rounds had")


class ReportJudgeOut(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField()
    model = serializers.CharField()
    rounds = serializers.IntegerField(help_text="rounds with at least one score from this judge")
    left_out = JudgeLeftOutOut(
        many=True,
        required=False,
        help_text="rounds judged on another set of metrics, left out so that like is compared with like",
    )


class CategoryShareOut(serializers.Serializer):
    category = serializers.CharField()
    count = serializers.IntegerField()
    share = serializers.FloatField(allow_null=True)
    ci_low = serializers.FloatField(allow_null=True, help_text="exact (Clopper–Pearson) 95% interval")
    ci_high = serializers.FloatField(allow_null=True)


class VariantCategoriesOut(serializers.Serializer):
    variant = serializers.IntegerField()
    label = serializers.CharField()
    answers = serializers.IntegerField(help_text="answers the judge classified")
    shares = CategoryShareOut(many=True)


class CategoriesOut(serializers.Serializer):
    judge = serializers.DictField()
    categories = serializers.ListField(child=serializers.CharField())
    variants = VariantCategoriesOut(many=True)


class LeftOutVoterOut(serializers.Serializer):
    voter = serializers.CharField(help_text="username")
    votes = serializers.IntegerField()
    reason = serializers.CharField(help_text="the owner's reason for excluding this voter")


class LeftOutOut(serializers.Serializer):
    votes = serializers.IntegerField(help_text="votes of excluded voters that the figures leave out")
    voters = LeftOutVoterOut(many=True)
    sentence = serializers.CharField()


class ConversationWinnerOut(serializers.Serializer):
    variant = serializers.IntegerField()
    votes = serializers.IntegerField()


class ConversationVotesOut(serializers.Serializer):
    total = serializers.IntegerField()
    tie = serializers.IntegerField()
    all_bad = serializers.IntegerField()
    winners = ConversationWinnerOut(many=True, help_text="votes per winning variant id, most first")


class TurnsOut(serializers.Serializer):
    counting = serializers.CharField(help_text="how the figures count the turns of conversations")
    conversation_votes = ConversationVotesOut(help_text="votes on whole conversations: not in the figures above")


class GroupReportOut(serializers.Serializer):
    group = ReportGroupOut()
    judge = ReportJudgeOut(allow_null=True, help_text="the judge whose scores the report uses")
    categories = CategoriesOut(
        allow_null=True, required=False, help_text="a classification judge's categories per variant; null without"
    )
    pass_threshold = serializers.FloatField()
    left_out = LeftOutOut(help_text="votes left out of the figures: voters an owner excluded")
    report = StatsReportOut()
    variant_figures = VariantFiguresOut(
        many=True, help_text="per variant: latency, output tokens and cost (mean and spread), answers' consistency"
    )
    turns = TurnsOut(help_text="conversations (docs/conversations.md): each turn's vote is one comparison")


class RatingOut(serializers.Serializer):
    key = serializers.CharField(help_text="model id, or the prompt version's identity (SHA-256 of its text)")
    label = serializers.CharField()
    labels = serializers.ListField(child=serializers.CharField(), help_text="the variant labels it appeared under")
    models = serializers.ListField(child=serializers.CharField())
    groups = serializers.IntegerField(help_text="comparisons it appears in")
    prompt = serializers.CharField(allow_null=True, help_text="an excerpt of the prompt version (by=prompt)")
    rating = serializers.FloatField()
    ci_low = serializers.FloatField(allow_null=True, help_text="95% bootstrap interval; null when not measured")
    ci_high = serializers.FloatField(allow_null=True)
    not_measured = serializers.CharField(
        allow_null=True,
        help_text="why the interval measures nothing (one-sided votes, or every resample gives the same rating); "
        "null when it does",
    )
    bound_error = serializers.FloatField(
        help_text="how far another bootstrap seed could move either bound, in rating points (a 95% range from the "
        "resamples' order statistics)"
    )
    rank = serializers.IntegerField(
        help_text="1 + how many ratings are clearly higher: their difference from this one is more than 1.96 "
        "standard errors (a z-test per pair at 5%, not adjusted; deterministic, not from the resamples)"
    )
    matches = serializers.IntegerField()
    wins = serializers.IntegerField()
    losses = serializers.IntegerField()
    ties = serializers.IntegerField()
    few_matches = serializers.BooleanField(help_text="fewer matches than the minimum: a provisional rank")
    one_sided = serializers.BooleanField(
        help_text="the votes leave this rating unbounded (e.g. it never lost): the rating and its interval are set "
        "by the fitting penalty, not measured"
    )


class LeaderboardFiltersOut(serializers.Serializer):
    since = serializers.DateField(allow_null=True)
    until = serializers.DateField(allow_null=True)
    author = serializers.CharField(allow_null=True)
    group = serializers.IntegerField(allow_null=True)


class LeaderboardOut(serializers.Serializer):
    by = serializers.ChoiceField(choices=By.choices)
    workspace = serializers.IntegerField()
    filters = LeaderboardFiltersOut()
    votes = serializers.IntegerField()
    resamples = serializers.IntegerField(help_text="bootstrap resamples behind the intervals")
    seed = serializers.IntegerField()
    confidence = serializers.FloatField()
    minimum_matches = serializers.IntegerField()
    ratings = RatingOut(many=True)
    left_out = LeftOutOut(help_text="votes left out of the ratings: voters an owner excluded")
    summary = serializers.CharField()
    one_sided = serializers.BooleanField(help_text="some rating is one-sided (see ratings[].one_sided)")
    bound_error = serializers.FloatField(
        allow_null=True, help_text="the largest ratings[].bound_error among measured intervals; null without any"
    )
    fit = serializers.CharField(help_text="how the ratings were fitted: exact maximum likelihood where it exists")
    turn_counting = serializers.CharField(help_text="how the ratings count the turns of conversations")


FORMAT = OpenApiParameter("format", str, enum=["json", "csv"], description="csv: the main table only")


def attachment(name: str) -> dict[str, str]:
    return {"Content-Disposition": f'attachment; filename="{name}.csv"'}


class GroupReport(APIView):
    renderer_classes = [*api_settings.DEFAULT_RENDERER_CLASSES, CSVRenderer]

    @extend_schema(
        parameters=[ReportQueryIn, FORMAT],
        responses={(200, "application/json"): GroupReportOut, (200, "text/csv"): OpenApiTypes.STR},
    )
    def get(self, request, pk):
        group = group_for_user(request.user, pk)
        query = ReportQueryIn(data=request.query_params)
        query.is_valid(raise_exception=True)
        report = cached_group_report(group, pass_threshold=query.validated_data["pass_threshold"])
        figures = group_variant_figures(group, report["group"]["variants"])
        data = GroupReportOut({**report, "variant_figures": figures}).data
        if request.accepted_renderer.format == CSVRenderer.format:
            return Response(report_rows(data), headers=attachment(f"report-{group.pk}"))
        return Response(data)


class WorkspaceLeaderboard(APIView):
    renderer_classes = [*api_settings.DEFAULT_RENDERER_CLASSES, CSVRenderer]

    @extend_schema(
        parameters=[LeaderboardQueryIn, FORMAT],
        responses={(200, "application/json"): LeaderboardOut, (200, "text/csv"): OpenApiTypes.STR},
    )
    def get(self, request, pk):
        workspace = workspace_for_user(request.user, pk)
        query = LeaderboardQueryIn(data=request.query_params, context={"workspace": workspace})
        query.is_valid(raise_exception=True)
        board = cached_leaderboard(workspace, by=query.validated_data["by"], filters=query.filters())
        data = LeaderboardOut({**board, "turn_counting": TURN_COUNTING}).data
        if request.accepted_renderer.format == CSVRenderer.format:
            return Response(leaderboard_rows(data), headers=attachment(f"leaderboard-{workspace.pk}-{data['by']}"))
        return Response(data)
