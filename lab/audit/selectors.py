"""Reads of the audit log: one workspace's entries, newest first, optionally of one action."""

from django.db.models import QuerySet

from .models import AuditEntry


def audit_entries(*, workspace, action: str = "") -> QuerySet[AuditEntry]:
    entries = AuditEntry.objects.filter(workspace=workspace)
    return entries.filter(action=action) if action else entries
