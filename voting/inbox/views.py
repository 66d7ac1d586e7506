"""The "To vote" inbox page: the round to vote on is fetched from the inbox API and voted on by button or key."""

from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.views.decorators.http import require_safe

from lab.access import workspace_for_user
from voting.api.inbox import InboxQueryIn
from voting.selectors import filter_choices

from .rule import RULE_SENTENCE


@login_required
@require_safe
def inbox_page(request, pk):
    workspace = workspace_for_user(request.user, pk)
    query = InboxQueryIn(data=request.GET, context={"workspace": workspace})
    valid = query.is_valid()
    context = {
        "workspace": workspace,
        "rule": RULE_SENTENCE,
        "errors": query.errors,
        # A bad filter shows its message beside the form and the unfiltered inbox below it.
        "filters": {key: request.GET[key] for key in ("group", "author", "model") if valid and request.GET.get(key)},
        "blind": query.validated_data["blind"] if valid else True,
        **filter_choices(workspace),
    }
    return render(request, "voting/inbox.html", context)
