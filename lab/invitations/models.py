"""An invitation. Only a hash of its key is stored: the link is shown (or mailed) once, when it is made."""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from ..roles import Role


class InvitationState(models.TextChoices):
    PENDING = "pending", "Pending"
    ACCEPTED = "accepted", "Accepted"
    REVOKED = "revoked", "Revoked"
    EXPIRED = "expired", "Expired"


class Invitation(models.Model):
    workspace = models.ForeignKey("lab.Workspace", on_delete=models.CASCADE, related_name="invitations")
    # Empty for a link that anyone holding it may use.
    email = models.EmailField(blank=True)
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.EDITOR)
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="invitations_sent"
    )
    created_at = models.DateTimeField(auto_now_add=True)
    expires_at = models.DateTimeField()
    accepted_at = models.DateTimeField(null=True, blank=True)
    accepted_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(condition=Q(role__in=Role.values), name="invitation_role_valid"),
            models.CheckConstraint(condition=Q(expires_at__gt=models.F("created_at")), name="invitation_expires_later"),
            models.CheckConstraint(
                condition=Q(accepted_at__isnull=True) | Q(revoked_at__isnull=True),
                name="invitation_accepted_or_revoked",
            ),
        ]

    def __str__(self) -> str:
        return self.email or "invitation link"

    @property
    def state(self) -> InvitationState:
        if self.accepted_at:
            return InvitationState.ACCEPTED
        if self.revoked_at:
            return InvitationState.REVOKED
        if self.expires_at <= timezone.now():
            return InvitationState.EXPIRED
        return InvitationState.PENDING
