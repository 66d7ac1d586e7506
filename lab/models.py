"""Tenancy (workspaces and roles), provider connections, and the worker processes that claim jobs."""

import uuid

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from . import crypto
from .providers.base import DEFAULT_MAX_CONCURRENCY
from .roles import ROLE_RANK, Role  # noqa: F401  (re-exported: callers name them here)


class Workspace(models.Model):
    name = models.CharField(max_length=120)
    created_at = models.DateTimeField(auto_now_add=True)
    # Set by the worker health check; lets the settings page say whether a worker is alive.
    worker_seen_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["name", "id"]

    def __str__(self) -> str:
        return self.name


class Membership(models.Model):
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=10, choices=Role.choices, default=Role.VIEWER)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "workspace"], name="membership_one_per_user_and_workspace"),
            models.CheckConstraint(condition=Q(role__in=Role.values), name="membership_role_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.workspace} ({self.role})"

    def allows(self, role: str) -> bool:
        return ROLE_RANK[Role(self.role)] >= ROLE_RANK[Role(role)]


class ConnectionKind(models.TextChoices):
    OPENAI = "openai", "OpenAI"
    ANTHROPIC = "anthropic", "Anthropic"
    OPENROUTER = "openrouter", "OpenRouter"
    OPENAI_COMPATIBLE = "openai_compatible", "OpenAI-compatible (Ollama, vLLM, LM Studio, llama.cpp)"
    GEMINI = "gemini", "Google Gemini"
    SIMULATED = "simulated", "Simulated (offline, deterministic)"


class ConnectionQuerySet(models.QuerySet):
    def shared(self):
        """The team's connections: the ones Settings and the API show and change."""
        return self.filter(owner__isnull=True)

    def visible_to(self, user):
        """The team's connections and this person's private ones (made from their environment by the CLI)."""
        return self.filter(Q(owner__isnull=True) | Q(owner=user))


class Connection(models.Model):
    """A provider account. Its name prefixes model ids: `<name>::<model>`.

    A connection with an `owner` is private to that person: `manage.py experiment run` makes one from the provider
    variables of their environment (lab.connection_env) so their key never replaces the team's. Names stay unique
    in the workspace, so a model id names one connection whoever reads it.
    """

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="connections")
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL,
        on_delete=models.CASCADE,
        null=True,
        blank=True,
        related_name="private_connections",
        help_text="Set for a person's private connection (from their environment); empty for the team's.",
    )
    name = models.SlugField(max_length=60)
    kind = models.CharField(max_length=20, choices=ConnectionKind.choices)
    base_url = models.URLField(max_length=300, blank=True)
    # Ciphertext only (MultiFernet); the plaintext never leaves `api_key()`.
    api_key_encrypted = models.TextField(blank=True, editable=False)
    api_key_hint = models.CharField(max_length=20, blank=True, editable=False)
    max_concurrency = models.PositiveIntegerField(default=DEFAULT_MAX_CONCURRENCY)
    rpm = models.PositiveIntegerField(default=60, help_text="Requests per minute across all workers.")
    tpm = models.PositiveIntegerField(
        default=0, help_text="Tokens per minute across all workers (input + expected output); 0 for no budget."
    )
    models_cache = models.JSONField(default=list, blank=True, editable=False)
    models_fetched_at = models.DateTimeField(null=True, blank=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    objects = ConnectionQuerySet.as_manager()

    class Meta:
        ordering = ["name"]
        constraints = [
            models.UniqueConstraint(fields=["workspace", "name"], name="connection_name_unique_in_workspace"),
            models.CheckConstraint(condition=Q(kind__in=ConnectionKind.values), name="connection_kind_valid"),
            models.CheckConstraint(condition=Q(max_concurrency__gte=1), name="connection_concurrency_positive"),
            models.CheckConstraint(condition=Q(rpm__gte=1), name="connection_rpm_positive"),
        ]

    def __str__(self) -> str:
        return f"{self.name} ({self.get_kind_display()})"

    def __repr__(self) -> str:
        # Never include the key, not even encrypted, in debug output.
        return f"<Connection {self.pk} {self.name} {self.kind}>"

    def set_api_key(self, plaintext: str) -> None:
        self.api_key_encrypted = crypto.encrypt(plaintext) if plaintext else ""
        self.api_key_hint = crypto.mask(plaintext)

    def api_key(self) -> str:
        return crypto.decrypt(self.api_key_encrypted) if self.api_key_encrypted else ""


class WorkerProcess(models.Model):
    """A process that claims jobs (lab/jobs/workers.py): alive while its heartbeat is fresh; a job records which one
    claimed it, so the jobs of one that is gone are taken back and run again."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    node = models.CharField(max_length=255)  # the Celery node name (worker@host); a restart reuses it
    pid = models.PositiveIntegerField()
    started_at = models.DateTimeField(default=timezone.now)
    seen_at = models.DateTimeField(default=timezone.now)  # its last heartbeat
    # Since when its heartbeats came without a gap of JOBS_WORKER_LOST_AFTER_S (reset after an outage): only a
    # worker that beat that long proves the database took heartbeats while a silent one wrote none.
    beating_since = models.DateTimeField(default=timezone.now)
    stopped_at = models.DateTimeField(null=True, blank=True)  # it stopped, or a later process of its node started

    class Meta:
        indexes = [
            # "Is any worker alive?" (the comparison page, the sweep) and "which are gone?" (the reclaim).
            models.Index(fields=["seen_at"], name="workerprocess_seen"),
        ]

    def __str__(self) -> str:
        return f"{self.node} (pid {self.pid})"


# Teams' models live beside their code; importing them here registers them with this app.
from .accounts.models import PasswordAttempt  # noqa: E402, F401
from .audit.models import Action, AuditEntry  # noqa: E402, F401
from .files.models import WorkspaceFile  # noqa: E402, F401
from .invitations.models import Invitation, InvitationState  # noqa: E402, F401
from .tokens.models import ApiToken, Scope  # noqa: E402, F401
