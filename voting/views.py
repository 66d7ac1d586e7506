"""Voting partials for the comparison page, fetched by URL: a round's vote panel and the report tab.

Votes themselves are cast through the API (`POST /api/v1/rounds/{id}/vote/`); these only render.
"""

from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.views.decorators.http import require_safe

from compare.access import group_for_user, round_for_user
from compare.selectors import schema_validity

from . import page_selectors
from .reports.comparison import group_left_out


@login_required
@require_safe
def vote_panel(request, pk):
    round_ = round_for_user(request.user, pk)  # viewers vote too
    return render(request, "voting/_panel.html", page_selectors.vote_panel(round_, request.user))


@login_required
@require_safe
def report_tab(request, pk):
    group = group_for_user(request.user, pk)
    left_out = group_left_out(group)
    context = {
        "group": group,
        "left_out": left_out,
        "validity": schema_validity(group),
        **page_selectors.group_win_rates(group),
    }
    return render(request, "voting/_report.html", context)
