"""Pages: a comparison's report and a workspace's leaderboard. Tables are rendered here; the charts are drawn in the
browser (vendored Chart.js) from the same cached figures the API returns."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.views.decorators.http import require_safe

from compare.access import group_for_user
from compare.selectors import schema_validity
from lab.access import workspace_for_user

from ..api.reports import LeaderboardQueryIn
from ..conversation_counts import TURN_COUNTING, group_conversation_votes
from ..page_selectors import leaderboard_chart, report_page_view
from ..selectors import filter_choices
from .cache import cached_leaderboard
from .leaderboard import By, LeaderboardFilters


@login_required
@require_safe
def report_page(request, pk):
    group = group_for_user(request.user, pk)
    context = report_page_view(group)
    context["turn_counting"] = TURN_COUNTING
    context["validity"] = schema_validity(group)  # as on the report tab (voting/views.py)
    context["conversation_votes"] = _conversation_lines(group, group_conversation_votes(group))
    return render(request, "voting/report_page.html", context)


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
        "chart": leaderboard_chart(board),
        "turn_counting": TURN_COUNTING,
    }
    return render(request, "voting/leaderboard.html", context)


def _conversation_lines(group, counts: dict) -> dict:
    """The comparison's conversation votes for its report, by variant label (shown apart from the turn votes)."""
    labels = dict(group.variants.values_list("pk", "label"))
    winners = [(labels.get(pk, "?"), votes) for pk, votes in sorted(counts["variants"].items(), key=lambda kv: -kv[1])]
    return {**counts, "winners": winners}
