"""Writes for invitations: make one (mailing it when it names an address), accept it once, revoke it."""

import secrets
from datetime import timedelta
from functools import partial

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.mail import send_mail
from django.db import transaction
from django.urls import reverse
from django.utils import timezone

from ..audit.models import Action
from ..audit.services import audit_record
from ..models import ROLE_RANK, Membership, Role, Workspace
from ..tokens.models import key_hash
from .models import Invitation, InvitationState

MAX_DAYS = 90
# The session remembers which invitation someone opened (its id, not its key), so signing up to accept it works
# while sign-up is closed.
SESSION_KEY = "invitation_id"

# What someone holding a link that cannot be used is told, per state.
REFUSALS = {
    InvitationState.ACCEPTED: "This invitation was already used. Ask an owner of the workspace for a new one.",
    InvitationState.REVOKED: "This invitation was revoked by an owner of the workspace.",
    InvitationState.EXPIRED: "This invitation has expired. Ask an owner of the workspace for a new one.",
}


def invitation_link(*, base_url: str, key: str) -> str:
    return base_url.rstrip("/") + reverse("lab:invitation", args=[key])


@transaction.atomic
def invitation_create(
    *, workspace: Workspace, actor, role: str, email: str = "", days: int | None = None, base_url: str
) -> tuple[Invitation, str]:
    """An invitation and its link; the link is mailed when an address is given and never stored."""
    days = settings.INVITATION_DEFAULT_DAYS if days is None else days
    errors = {}
    if role not in Role.values:
        errors["role"] = f"Role must be one of: {', '.join(Role.values)}."
    if not 1 <= days <= MAX_DAYS:
        errors["days"] = f"An invitation lasts from 1 to {MAX_DAYS} days."
    email = (email or "").strip().lower()
    if email and Membership.objects.filter(workspace=workspace, user__email__iexact=email).exists():
        errors["email"] = "Someone with that address is already a member."
    if errors:
        raise ValidationError(errors)
    key = secrets.token_urlsafe(32)
    invitation = Invitation(
        workspace=workspace,
        email=email,
        role=role,
        key_hash=key_hash(key),
        created_by=actor,
        expires_at=timezone.now() + timedelta(days=days),
    )
    invitation.full_clean(exclude=["key_hash", "created_by"])
    invitation.save()
    link = invitation_link(base_url=base_url, key=key)
    details = {"role": role, "expires_at": invitation.expires_at.isoformat(), "by": "email" if email else "link"}
    audit_record(actor=actor, action=Action.INVITATION_SENT, target=invitation, details=details)
    if email:
        transaction.on_commit(partial(_mail, invitation=invitation, actor=actor, link=link))
    return invitation, link


def _mail(*, invitation: Invitation, actor, link: str) -> None:
    role = Role(invitation.role).label.lower()
    send_mail(
        subject=f"Join {invitation.workspace.name} on Prompt Lab",
        message=(
            f"{actor.username} invites you to the workspace “{invitation.workspace.name}” on Prompt Lab as {role}.\n\n"
            f"Accept the invitation: {link}\n\n"
            f"The link works once and expires on {invitation.expires_at:%Y-%m-%d %H:%M} UTC."
        ),
        from_email=None,
        recipient_list=[invitation.email],
    )


def invitation_for_key(key: str) -> Invitation | None:
    return Invitation.objects.select_related("workspace", "created_by").filter(key_hash=key_hash(key or "")).first()


def invitation_opened_in(session) -> Invitation | None:
    """The invitation this session opened, if it can still be accepted."""
    invitation = Invitation.objects.filter(pk=session.get(SESSION_KEY) or 0).first()
    return invitation if invitation is not None and invitation.state == InvitationState.PENDING else None


@transaction.atomic
def invitation_accept(*, invitation: Invitation, user) -> Membership:
    """Join the workspace with the invited role (a member keeps a higher role they already have)."""
    invitation = Invitation.objects.select_for_update().get(pk=invitation.pk)
    if invitation.state != InvitationState.PENDING:
        raise ValidationError({"invitation": REFUSALS[invitation.state]})
    invitation.accepted_at, invitation.accepted_by = timezone.now(), user
    invitation.save(update_fields=["accepted_at", "accepted_by"])
    workspace = invitation.workspace
    audit_record(actor=user, action=Action.INVITATION_ACCEPTED, target=invitation, details={})
    membership, created = Membership.objects.get_or_create(
        user=user, workspace=workspace, defaults={"role": invitation.role}
    )
    if created:
        audit_record(
            actor=user,
            action=Action.MEMBER_ADDED,
            target=membership,
            details={"role": membership.role, "via": "invitation"},
        )
    elif ROLE_RANK[Role(invitation.role)] > ROLE_RANK[Role(membership.role)]:
        details = {"from": membership.role, "to": invitation.role, "via": "invitation"}
        membership.role = invitation.role
        membership.save(update_fields=["role"])
        audit_record(actor=user, action=Action.MEMBER_ROLE_CHANGED, target=membership, details=details)
    return membership


def invitation_accept_opened(*, session, user) -> Membership | None:
    """Signing up or in from an invitation's page accepts it at once: the person already chose to join there."""
    invitation = invitation_opened_in(session)
    if invitation is None:
        return None
    try:
        membership = invitation_accept(invitation=invitation, user=user)
    except ValidationError:
        return None  # taken or revoked meanwhile; the invitation's page says so
    session.pop(SESSION_KEY, None)
    session["workspace_id"] = membership.workspace_id
    return membership


@transaction.atomic
def invitation_revoke(*, invitation: Invitation, actor) -> Invitation:
    invitation = Invitation.objects.select_for_update().get(pk=invitation.pk)
    if invitation.state == InvitationState.ACCEPTED:
        raise ValidationError({"invitation": "This invitation was already accepted; remove the member instead."})
    if invitation.revoked_at is None:
        invitation.revoked_at = timezone.now()
        invitation.save(update_fields=["revoked_at"])
        audit_record(actor=actor, action=Action.INVITATION_REVOKED, target=invitation, details={})
    return invitation
