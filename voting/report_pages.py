"""Pages: a comparison's report and a workspace's leaderboard. Tables are rendered here; the charts are drawn in the
browser (vendored Chart.js) from the same cached figures the API returns."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.views.decorators.http import require_safe

from compare.access import group_for_user
from compare.experiments.models import Experiment
from lab.access import workspace_for_user

from .api.report_serializers import LeaderboardQueryIn
from .cache import cached_group_report, cached_leaderboard
from .leaderboard import By, LeaderboardFilters
from .reports import DEFAULT_PASS_THRESHOLD
from .selectors import filter_choices


def experiment_warnings(group) -> list[str]:
    """What an experiment's run warned of (its judge sharing a model family with a model): its report says it too."""
    estimate = Experiment.objects.filter(group=group).values_list("estimate", flat=True).first() or {}
    return list(estimate.get("warnings") or [])


@login_required
@require_safe
def report_page(request, pk):
    group = group_for_user(request.user, pk)
    data = cached_group_report(group, pass_threshold=DEFAULT_PASS_THRESHOLD)
    report = data["report"]
    model_of = {variant["key"]: variant["model"] for variant in data["group"]["variants"]}
    passed_of = {row["variant"]: row for row in (report["success"] or {}).get("variants", [])}
    context = {
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
        "chart": [
            {"label": rate["label"], "estimate": rate["win_rate"], "low": rate["ci_low"], "high": rate["ci_high"]}
            for rate in report["variants"]
            if rate["decisive"]
        ],
    }
    return render(request, "voting/report_page.html", context)


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


@login_required
@require_safe
def leaderboard_page(request, pk):
    workspace = workspace_for_user(request.user, pk)
    query = LeaderboardQueryIn(data=request.GET, context={"workspace": workspace})
    if query.is_valid():
        by, filters = query.validated_data["by"], query.filters()
    else:
        # A bad filter shows its message beside the form and the unfiltered board below it.
        by, filters = By.MODEL, LeaderboardFilters()
    board = cached_leaderboard(workspace, by=by, filters=filters)
    context = {
        "workspace": workspace,
        "board": board,
        "by": by,
        "by_choices": By.choices,
        "errors": query.errors,
        "values": request.GET,
        **filter_choices(workspace),
        "chart": [
            {"label": rating["label"], "estimate": rating["rating"], "low": rating["ci_low"], "high": rating["ci_high"]}
            for rating in board["ratings"]
        ],
    }
    return render(request, "voting/leaderboard.html", context)
