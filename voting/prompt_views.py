"""The prompt page's standing partial (fetched by URL): each version's win rate, rating, judge scores, experiments."""

from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.views.decorators.http import require_safe

from compare.access import prompt_for_user

from .prompt_versions import prompt_standing


@login_required
@require_safe
def prompt_standing_partial(request, pk):
    prompt = prompt_for_user(request.user, pk)
    return render(request, "voting/_prompt_standing.html", {"prompt": prompt, "standings": prompt_standing(prompt)})
