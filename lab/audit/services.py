"""Writes to the audit log. Every change the log lists calls `audit_record` inside the change's own transaction,
so an entry exists exactly when the change does."""

from datetime import timedelta

from django.conf import settings
from django.db.models import Model
from django.utils import timezone

from ..models import Workspace
from .models import Action, AuditEntry

# Field names whose values are never written into an entry, whatever a caller passes.
SECRET_WORDS = ("key", "secret", "password", "token")


def audit_record(
    *, actor, action: Action, target: Model, details: dict | None = None, workspace: Workspace | None = None
) -> AuditEntry:
    """One entry, in the target's workspace unless another is given; `actor` None is the system (a command)."""
    return AuditEntry.objects.create(
        workspace=workspace or target.workspace,
        actor=actor if getattr(actor, "pk", None) else None,
        actor_name=getattr(actor, "username", "") or "",
        action=action,
        target_type=target._meta.model_name,
        target_id=str(target.pk or ""),
        target_name=_name_of(target)[:200],
        details=_without_secrets(details or {}),
    )


def audit_record_for_user(*, actor, action: Action, target: Model, details: dict) -> None:
    """A change to a person's own things (their API tokens) is recorded in every workspace they belong to."""
    for workspace in Workspace.objects.filter(memberships__user=target.user):
        audit_record(workspace=workspace, actor=actor, action=action, target=target, details=details)


def audit_prune(*, now=None) -> int:
    """Delete entries older than AUDIT_RETENTION_DAYS (0 keeps everything); returns how many went."""
    days = settings.AUDIT_RETENTION_DAYS
    if days <= 0:
        return 0
    cutoff = (now or timezone.now()) - timedelta(days=days)
    deleted, _ = AuditEntry.objects.filter(created_at__lt=cutoff).delete()
    return deleted


def _name_of(target: Model) -> str:
    user = getattr(target, "user", None)
    if target._meta.model_name == "membership":
        return user.username
    if target._meta.model_name == "apitoken":
        return f"{target.name} ({user.username})"
    return str(
        getattr(target, "name", None) or getattr(target, "title", None) or getattr(target, "email", "") or target
    )


def _without_secrets(details: dict) -> dict:
    return {k: v for k, v in details.items() if not any(word in k.lower() for word in SECRET_WORDS)}
