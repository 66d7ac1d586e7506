"""A person's API token. Only a SHA-256 hash of the key is stored; the key itself is shown once when made."""

import hashlib

from django.conf import settings
from django.db import models
from django.db.models import Q


class Scope(models.TextChoices):
    READ = "read", "Read only"
    WRITE = "write", "Read and write"


def key_hash(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()


class ApiTokenQuerySet(models.QuerySet):
    def active(self):
        return self.filter(revoked_at__isnull=True)


class ApiToken(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=80)
    scope = models.CharField(max_length=10, choices=Scope.choices, default=Scope.WRITE)
    key_hash = models.CharField(max_length=64, unique=True, editable=False)
    # The first characters of the key, so a person can tell their tokens apart without the key.
    prefix = models.CharField(max_length=12, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    objects = ApiTokenQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(condition=Q(scope__in=Scope.values), name="api_token_scope_valid"),
            models.CheckConstraint(condition=~Q(name=""), name="api_token_named"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"

    def __repr__(self) -> str:
        return f"<ApiToken {self.pk} {self.prefix}… {self.scope}>"

    @property
    def can_write(self) -> bool:
        return self.scope == Scope.WRITE
