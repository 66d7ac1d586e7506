"""Reads for the voting pages and the voting parts of the comparison pages: a round's vote panel, the first report
tab, the history's vote figures, the report page's tables and the leaderboard's chart."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, IntegerField, OuterRef, Subquery

from compare.blind import outputs_as_seen_by, tally_as_seen
from compare.experiments.models import Experiment
from compare.models import CompareGroup, Output, OutputStatus, Round, Variant
from compare.page_selectors import count_per_group
from compare.selectors import round_with_outputs
from lab.stats.sample_size import MIN_DECISIVE_PER_PAIR
from lab.stats.votes import ALL_BAD, TIE, encode_votes
from lab.stats.winrate import WinRate, win_rates
from lab.stats.wording import percent, percent_interval

from .conversation_counts import conversation_vote_of
from .reports.cache import cached_group_report
from .reports.comparison import DEFAULT_PASS_THRESHOLD, group_round_votes, group_variants
from .reports.variant_figures import group_variant_figures
from .selectors import round_tally, vote_of
from .services import VOTABLE_ROUNDS


def history_vote_figures() -> dict:
    """What the comparisons' history shows of votes, per comparison (compare registers it as annotations): the vote
    count, and the leading variant's label and wins with the runner-up's wins (a tie when those are equal)."""
    leaders = (
        Variant.objects.filter(group=OuterRef("pk"))
        .annotate(wins=Count("outputs__votes"))
        .filter(wins__gt=0)
        .order_by("-wins", "position")
    )
    return {
        "vote_count": count_per_group(Round.objects.filter(group=OuterRef("pk")), "votes"),
        "leader_label": Subquery(leaders.values("label")[:1]),
        "leader_wins": Subquery(leaders.values("wins")[:1], output_field=IntegerField()),
        "runner_up_wins": Subquery(leaders.values("wins")[1:2], output_field=IntegerField()),
    }


@dataclass(frozen=True)
class AnswerChoice:
    key: str  # the keyboard key: "1" for the first column as this person sees it
    output: Output
    label: str
    votes: int | None  # None while the person may not see the counts
    can_win: bool
    mine: bool


def vote_panel(round_: Round, user) -> dict:
    """The answers in this person's column order, their vote, and the tally (in blind mode the total only until
    they vote, so early votes cannot sway theirs: the counts are not in the page at all, not merely hidden)."""
    round_ = round_with_outputs(round_)
    outputs, labels_visible = outputs_as_seen_by(round_, user)
    vote = vote_of(round_, user)
    tally = tally_as_seen(round_tally(round_), labels_visible=labels_visible)
    choices = [
        AnswerChoice(
            key=str(index),
            output=output,
            label=output.seen.label,
            votes=tally["outputs"].get(str(output.pk), 0) if labels_visible else None,
            can_win=output.status == OutputStatus.OK,
            mine=vote is not None and vote.output_id == output.pk,
        )
        for index, output in enumerate(outputs, start=1)
    ]
    conversation_vote = conversation_vote_of(round_, user) if round_.root_id else None
    return {
        "round": round_,
        "choices": choices,
        "vote": vote,
        # A later turn of a conversation also takes a vote on the whole conversation (voting.conversation_votes).
        "in_conversation": round_.root_id is not None,
        "conversation_vote": conversation_vote,
        "conversation_pick": conversation_vote.variant_id if conversation_vote else None,
        "tally": tally,
        "votable": round_.status in VOTABLE_ROUNDS,
        "show_tally": labels_visible,
        "blind": round_.group.blind,
    }


@dataclass(frozen=True)
class WinRateRow:
    label: str
    model: str
    rate: WinRate
    percent: str
    interval: str

    # The interval drawn on a 0–100 scale.
    @property
    def bar_start(self) -> float:
        return round(100 * (self.rate.ci_low or 0), 1)

    @property
    def bar_width(self) -> float:
        return round(100 * ((self.rate.ci_high or 0) - (self.rate.ci_low or 0)), 1)

    @property
    def bar_point(self) -> float:
        return round(min(100 * (self.rate.win_rate or 0), 98.8), 1)


def group_win_rates(group: CompareGroup) -> dict:
    """Win count and win rate per variant with its exact 95% interval, from every vote on the group's rounds."""
    variants = group_variants(group)
    votes = group_round_votes(group, variants)
    rates = win_rates(encode_votes(votes, [row.key for row in variants]))
    rows = [
        WinRateRow(
            label=variant.label,
            model=variant.model,
            rate=rate,
            percent=percent(rate.win_rate) if rate.win_rate is not None else "—",
            interval=percent_interval(rate.ci_low, rate.ci_high) if rate.ci_low is not None else "—",
        )
        for variant, rate in zip(variants, rates, strict=True)
    ]
    decisive = sum(1 for vote in votes if vote.winner is not None)
    return {
        "rows": rows,
        "votes": len(votes),
        "decisive": decisive,
        "ties": sum(1 for vote in votes if vote.outcome == TIE),
        "all_bad": sum(1 for vote in votes if vote.outcome == ALL_BAD),
        "minimum": MIN_DECISIVE_PER_PAIR,
        "enough": decisive >= MIN_DECISIVE_PER_PAIR,
    }


def report_page_view(group: CompareGroup) -> dict:
    """The report page's tables from the cached report (the same figures the API returns): win rates with their
    models, scores with their pass rates, the pair matrix, and the win-rate chart's points."""
    data = cached_group_report(group, pass_threshold=DEFAULT_PASS_THRESHOLD)
    report = data["report"]
    model_of = {variant["key"]: variant["model"] for variant in data["group"]["variants"]}
    passed_of = {row["variant"]: row for row in (report["success"] or {}).get("variants", [])}
    return {
        "group": group,
        "judge": data["judge"],
        "judge_warnings": experiment_warnings(group),
        "categories": data.get("categories"),
        "report": report,
        "left_out": data["left_out"],
        "rates": [{**rate, "model": model_of[rate["variant"]]} for rate in report["variants"]],
        "scores": [
            {**row, "passed": passed_of.get(row["variant"])} for row in (report["scores"] or {}).get("variants", [])
        ],
        "matrix": pair_matrix(report),
        "figures": group_variant_figures(group, data["group"]["variants"]),
        "chart": [
            {"label": rate["label"], "estimate": rate["win_rate"], "low": rate["ci_low"], "high": rate["ci_high"]}
            for rate in report["variants"]
            if rate["decisive"]
        ],
    }


def experiment_warnings(group) -> list[str]:
    """What an experiment's run warned of (its judge sharing a model family with a model): its report says it too."""
    estimate = Experiment.objects.filter(group=group).values_list("estimate", flat=True).first() or {}
    return list(estimate.get("warnings") or [])


def pair_matrix(report: dict) -> list[dict]:
    """Rows and columns are the variants; a cell is the row variant's record against the column variant."""
    pairs = {(pair["a"], pair["b"]): pair for pair in report["pairs"]}
    rows = []
    for row in report["variants"]:
        cells = []
        for column in report["variants"]:
            if row["variant"] == column["variant"]:
                cells.append(None)
            elif pair := pairs.get((row["variant"], column["variant"])):
                cells.append(
                    _cell(pair, pair["a_wins"], pair["b_wins"], pair["a_share"], pair["ci_low"], pair["ci_high"])
                )
            else:
                pair = pairs[(column["variant"], row["variant"])]
                low, high = pair["ci_low"], pair["ci_high"]
                share = None if pair["a_share"] is None else 1 - pair["a_share"]
                cells.append(
                    _cell(
                        pair,
                        pair["b_wins"],
                        pair["a_wins"],
                        share,
                        None if high is None else 1 - high,
                        None if low is None else 1 - low,
                    )
                )
        rows.append({"label": row["label"], "cells": cells})
    return rows


def _cell(pair: dict, wins: int, losses: int, share, low, high) -> dict:
    return {
        "wins": wins,
        "losses": losses,
        "ties": pair["ties"],
        "share": share,
        "low": low,
        "high": high,
        "verdict": pair["verdict"],
        "p_holm": pair["p_holm"],
        "p_always_valid_holm": pair["p_always_valid_holm"],
        "ahead": share is not None and share > 0.5,
    }


def leaderboard_chart(board: dict) -> list[dict]:
    """The leaderboard chart's points: each rating with a measured interval (one that measures nothing, as from
    one-sided votes, is left out: the table says why)."""
    return [
        {"label": rating["label"], "estimate": rating["rating"], "low": rating["ci_low"], "high": rating["ci_high"]}
        for rating in board["ratings"]
        if rating["ci_low"] is not None
    ]
