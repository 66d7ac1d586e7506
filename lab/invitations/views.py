"""Invitation pages: an owner makes or revokes one on the settings page; anyone with a link opens it here."""

from django import forms
from django.conf import settings
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from ..access import invitation_for_user, membership_for_user
from ..models import Role
from .models import InvitationState
from .services import (
    REFUSALS,
    SESSION_KEY,
    invitation_accept,
    invitation_create,
    invitation_for_key,
    invitation_revoke,
)


class InvitationForm(forms.Form):
    email = forms.EmailField(required=False, help_text="Leave empty to make a link you pass on yourself.")
    role = forms.ChoiceField(choices=Role.choices, initial=Role.EDITOR)
    days = forms.IntegerField(
        min_value=1, max_value=90, initial=lambda: settings.INVITATION_DEFAULT_DAYS, label="Expires after (days)"
    )


@login_required
@require_POST
def invitation_new(request, pk):
    workspace = membership_for_user(request.user, pk, role=Role.OWNER).workspace
    form = InvitationForm(request.POST)
    if not form.is_valid():
        for field, errors in form.errors.items():
            messages.error(request, f"{form[field].label}: {' '.join(errors)}" if field in form.fields else errors[0])
        return redirect("lab:settings", pk=workspace.pk)
    try:
        invitation, link = invitation_create(
            workspace=workspace, actor=request.user, base_url=request.build_absolute_uri("/"), **form.cleaned_data
        )
    except ValidationError as exc:
        for errors in exc.message_dict.values():
            messages.error(request, " ".join(errors))
        return redirect("lab:settings", pk=workspace.pk)
    if invitation.email:
        messages.success(request, f"Invitation mailed to {invitation.email}.")
        return redirect("lab:settings", pk=workspace.pk)
    # The link is not stored: show it on this one page, then it is only in the hands it is given to.
    return render(request, "lab/invitation_link.html", {"workspace": workspace, "invitation": invitation, "link": link})


@login_required
@require_POST
def invitation_remove(request, pk, invitation_id):
    invitation = invitation_for_user(request.user, pk, invitation_id)
    workspace = invitation.workspace
    try:
        invitation_revoke(invitation=invitation, actor=request.user)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    else:
        messages.success(request, f"Invitation for {invitation} revoked.")
    return redirect("lab:settings", pk=workspace.pk)


@require_http_methods(["GET", "HEAD", "POST"])
def invitation_open(request, key):
    """GET shows what the invitation is (or why it cannot be used); POST, signed in, accepts it."""
    invitation = invitation_for_key(key)
    if invitation is None:
        return render(request, "lab/invitation.html", {"refusal": "This invitation link is not valid."}, status=404)
    if invitation.state == InvitationState.ACCEPTED and invitation.accepted_by_id == request.user.id:
        return redirect("workspace_home", pk=invitation.workspace_id)  # signing up or in through it accepted it
    if invitation.state != InvitationState.PENDING:
        request.session.pop(SESSION_KEY, None)
        return render(request, "lab/invitation.html", {"refusal": REFUSALS[invitation.state]}, status=410)
    if request.method == "POST" and request.user.is_authenticated:
        try:
            membership = invitation_accept(invitation=invitation, user=request.user)
        except ValidationError as exc:
            return render(request, "lab/invitation.html", {"refusal": " ".join(exc.messages)}, status=410)
        request.session.pop(SESSION_KEY, None)
        request.session["workspace_id"] = membership.workspace_id
        messages.success(
            request, f"Welcome to {membership.workspace.name}, as {membership.get_role_display().lower()}."
        )
        return redirect("workspace_home", pk=membership.workspace_id)
    request.session[SESSION_KEY] = invitation.pk
    return render(request, "lab/invitation.html", {"invitation": invitation, "role": Role(invitation.role).label})
