"""The voters page: each voter's quality figures, flags with their evidence for owners, and owners' exclusions."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST, require_safe

from lab.access import membership_for_user
from lab.models import Role

from . import services
from .quality import READING_WPS
from .selectors import voter_quality_for


@login_required
@require_safe
def voters_page(request, pk):
    membership = membership_for_user(request.user, pk)
    context = {
        "workspace": membership.workspace,
        "quality": voter_quality_for(membership),
        "is_owner": membership.allows(Role.OWNER),
        "reading_wps": READING_WPS,
    }
    return render(request, "voting/voters.html", context)


@login_required
@require_POST
def voter_exclude_page(request, pk, user_id):
    membership = membership_for_user(request.user, pk, Role.OWNER)
    try:
        services.voter_exclude(
            workspace=membership.workspace, user_id=user_id, reason=request.POST.get("reason", ""), by=request.user
        )
    except ValidationError as error:
        messages.error(request, " ".join(error.messages))
    return redirect("voting:voters", pk=pk)


@login_required
@require_POST
def voter_readmit_page(request, pk, user_id):
    membership = membership_for_user(request.user, pk, Role.OWNER)
    services.voter_readmit(workspace=membership.workspace, user_id=user_id)
    return redirect("voting:voters", pk=pk)
