"""One audit entry: a workspace, who acted, what they did, on what, and when."""

from django.conf import settings
from django.db import models
from django.db.models import Q


class Action(models.TextChoices):
    MEMBER_ADDED = "member.added", "Member added"
    MEMBER_REMOVED = "member.removed", "Member removed"
    MEMBER_ROLE_CHANGED = "member.role_changed", "Member's role changed"
    CONNECTION_CREATED = "connection.created", "Connection created"
    CONNECTION_CHANGED = "connection.changed", "Connection changed"
    CONNECTION_DELETED = "connection.deleted", "Connection deleted"
    CONNECTION_KEY_ROTATED = "connection.key_rotated", "Connection key replaced"
    COMPARISON_DELETED = "comparison.deleted", "Comparison deleted"
    COMPARISON_REVEALED = "comparison.revealed", "Blind comparison revealed"
    INVITATION_SENT = "invitation.sent", "Invitation sent"
    INVITATION_ACCEPTED = "invitation.accepted", "Invitation accepted"
    INVITATION_REVOKED = "invitation.revoked", "Invitation revoked"
    TOKEN_CREATED = "token.created", "API token created"
    TOKEN_REVOKED = "token.revoked", "API token revoked"
    FILE_UPLOADED = "file.uploaded", "File uploaded"


class AuditEntry(models.Model):
    workspace = models.ForeignKey("lab.Workspace", on_delete=models.CASCADE, related_name="audit_entries")
    # The actor's name is kept as text too, so an entry still says who it was after their account is gone.
    actor = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    actor_name = models.CharField(max_length=150, blank=True)
    action = models.CharField(max_length=40, choices=Action.choices)
    target_type = models.CharField(max_length=40)
    target_id = models.CharField(max_length=40, blank=True)
    target_name = models.CharField(max_length=200, blank=True)
    # Non-secret facts about the change (a role, the names of changed fields); never a key or token.
    details = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True, db_index=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [models.CheckConstraint(condition=Q(action__in=Action.values), name="audit_action_valid")]
        # The owners' page and the CSV export read one workspace's entries newest first.
        indexes = [models.Index(fields=["workspace", "-created_at"], name="audit_workspace_recent")]

    def __str__(self) -> str:
        return f"{self.created_at:%Y-%m-%d %H:%M} {self.actor_name} {self.action} {self.target_name}"
