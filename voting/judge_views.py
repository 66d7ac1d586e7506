"""The judge's agreement with the team: a voting partial the judge's page (in judging) fetches by URL."""

from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.views.decorators.http import require_safe

from judging.access import judge_for_user

from .judge_agreement import judge_agreement_view


@login_required
@require_safe
def judge_agreement_partial(request, pk):
    context = judge_agreement_view(judge_for_user(request.user, pk))
    return render(request, "voting/judge_agreement.html", context)
