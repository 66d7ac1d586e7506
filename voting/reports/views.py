"""Pages: a comparison's report and a workspace's leaderboard. Tables are rendered here; the charts are drawn in the
browser (vendored Chart.js) from the same cached figures the API returns."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.views.decorators.http import require_safe

from compare.access import group_for_user
from lab.access import workspace_for_user

from ..api.reports import LeaderboardQueryIn
from ..page_selectors import leaderboard_chart, report_page_view
from ..selectors import filter_choices
from .cache import cached_leaderboard
from .leaderboard import By, LeaderboardFilters


@login_required
@require_safe
def report_page(request, pk):
    context = report_page_view(group_for_user(request.user, pk))
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
    }
    return render(request, "voting/leaderboard.html", context)
