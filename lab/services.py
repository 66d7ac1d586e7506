"""Writes for tenancy and connections: workspaces, members, accounts and provider connections."""

import logging

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from . import connection_rules, crypto
from .audit.models import Action
from .audit.services import audit_record
from .models import Connection, ConnectionKind, Membership, Role, Workspace
from .providers.base import DEFAULT_MAX_CONCURRENCY

logger = logging.getLogger(__name__)
User = get_user_model()

# Where each kind lives unless the connection says otherwise.
DEFAULT_BASE_URLS = {
    ConnectionKind.OPENAI: "https://api.openai.com/v1",
    ConnectionKind.ANTHROPIC: "https://api.anthropic.com/v1",
    ConnectionKind.OPENROUTER: "https://openrouter.ai/api/v1",
    ConnectionKind.GEMINI: "https://generativelanguage.googleapis.com/v1beta",
}
KINDS_NEEDING_KEY = {
    ConnectionKind.OPENAI,
    ConnectionKind.ANTHROPIC,
    ConnectionKind.OPENROUTER,
    ConnectionKind.GEMINI,
}


@transaction.atomic
def workspace_create(*, owner, name: str) -> Workspace:
    name = (name or "").strip()
    if not name:
        raise ValidationError({"name": "Give the workspace a name."})
    if len(name) > 120:
        raise ValidationError({"name": "A workspace's name has at most 120 characters."})
    workspace = Workspace.objects.create(name=name)
    Membership.objects.create(user=owner, workspace=workspace, role=Role.OWNER)
    _seed_connections(workspace)
    return workspace


def _seed_connections(workspace: Workspace) -> None:
    """Every workspace works offline (simulated); provider keys from the environment add real ones."""
    Connection.objects.create(
        workspace=workspace, name="simulated", kind=ConnectionKind.SIMULATED, max_concurrency=16, rpm=6000
    )
    seed = settings.PROVIDER_SEED
    for kind in (
        ConnectionKind.OPENAI,
        ConnectionKind.ANTHROPIC,
        ConnectionKind.OPENROUTER,
        ConnectionKind.GEMINI,
    ):
        if seed.get(kind):
            connection = Connection(workspace=workspace, name=kind.value, kind=kind, base_url=DEFAULT_BASE_URLS[kind])
            connection.set_api_key(seed[kind])
            connection.save()
    if seed.get(ConnectionKind.OPENAI_COMPATIBLE):
        Connection.objects.create(
            workspace=workspace,
            name="local",
            kind=ConnectionKind.OPENAI_COMPATIBLE,
            base_url=seed[ConnectionKind.OPENAI_COMPATIBLE],
        )


@transaction.atomic
def account_first_workspace(*, user) -> Workspace:
    """Every new account, however it signed up, starts with a workspace of its own, of which it is the owner."""
    return workspace_create(owner=user, name=f"{user.username}'s workspace")


@transaction.atomic
def membership_add(*, workspace: Workspace, username: str, role: str, actor=None) -> Membership:
    """Add an existing user to a workspace, or change their role if they are already a member."""
    if role not in Role.values:
        raise ValidationError({"role": f"Role must be one of: {', '.join(Role.values)}."})
    user = User.objects.filter(username=(username or "").strip()).first()
    if user is None:
        raise ValidationError({"username": "No user with that username."})
    membership, created = Membership.objects.select_for_update().get_or_create(
        user=user, workspace=workspace, defaults={"role": role}
    )
    if created:
        audit_record(actor=actor, action=Action.MEMBER_ADDED, target=membership, details={"role": role})
    elif membership.role != role:
        if membership.role == Role.OWNER and _last_owner(workspace, membership):
            raise ValidationError({"role": "A workspace needs at least one owner."})
        details = {"from": membership.role, "to": role}
        membership.role = role
        membership.save(update_fields=["role"])
        audit_record(actor=actor, action=Action.MEMBER_ROLE_CHANGED, target=membership, details=details)
    return membership


@transaction.atomic
def membership_remove(*, membership: Membership, actor=None) -> None:
    """Take someone out of a workspace; their session and API tokens lose it with the row."""
    membership = Membership.objects.select_for_update().select_related("user", "workspace").get(pk=membership.pk)
    if membership.role == Role.OWNER and _last_owner(membership.workspace, membership):
        raise ValidationError({"role": "A workspace needs at least one owner."})
    audit_record(actor=actor, action=Action.MEMBER_REMOVED, target=membership, details={"role": membership.role})
    membership.delete()


def _last_owner(workspace: Workspace, membership: Membership) -> bool:
    return not workspace.memberships.filter(role=Role.OWNER).exclude(pk=membership.pk).exists()


def _validate_api_key(api_key: str) -> None:
    if api_key and (problem := connection_rules.api_key_problem(api_key)):
        raise ValidationError({"api_key": problem})


def _validate_connection(connection: Connection, *, api_key_given: bool) -> None:
    if connection.base_url and (problem := connection_rules.base_url_problem(connection.base_url)):
        raise ValidationError({"base_url": problem})
    if connection.kind in DEFAULT_BASE_URLS and not connection.base_url:
        connection.base_url = DEFAULT_BASE_URLS[ConnectionKind(connection.kind)]
    if connection.kind == ConnectionKind.OPENAI_COMPATIBLE and not connection.base_url:
        raise ValidationError(
            {"base_url": "An OpenAI-compatible server needs its base URL (e.g. http://127.0.0.1:11434/v1)."}
        )
    if connection.kind in KINDS_NEEDING_KEY and not (api_key_given or connection.api_key_encrypted):
        raise ValidationError({"api_key": f"A {ConnectionKind(connection.kind).label} connection needs an API key."})
    try:
        connection.full_clean(exclude=["workspace"], validate_unique=False)
    except ValidationError as exc:
        raise ValidationError(exc.message_dict) from None
    clash = Connection.objects.filter(workspace_id=connection.workspace_id, name=connection.name).exclude(
        pk=connection.pk
    )
    if clash.exists():
        raise ValidationError({"name": "This workspace already has a connection with that name."})


@transaction.atomic
def connection_create(
    *,
    workspace: Workspace,
    name: str,
    kind: str,
    base_url: str = "",
    api_key: str = "",
    max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
    rpm: int = 60,
    tpm: int = 0,
    actor=None,
    owner=None,
) -> Connection:
    """A connection of the team, or private to `owner` (lab.connection_env makes those)."""
    connection = Connection(
        workspace=workspace,
        owner=owner,
        name=name,
        kind=kind,
        base_url=base_url or "",
        max_concurrency=max_concurrency,
        rpm=rpm,
        tpm=tpm,
    )
    _validate_api_key(api_key)
    _validate_connection(connection, api_key_given=bool(api_key))
    connection.set_api_key(api_key)
    connection.save()
    logger.info("Connection %s (%s) created in workspace %s", connection.name, connection.kind, workspace.pk)
    details = {"kind": connection.kind, "base_url": connection.base_url, "private": owner is not None}
    audit_record(actor=actor, action=Action.CONNECTION_CREATED, target=connection, details=details)
    return connection


@transaction.atomic
def connection_update(*, connection: Connection, actor=None, **changes) -> Connection:
    """Change fields; an api_key of "" keeps the stored key, None leaves it alone, a value replaces it."""
    api_key = changes.pop("api_key", None)
    endpoint_before = connection.base_url
    changed = {}
    for field in ("name", "base_url", "max_concurrency", "rpm", "tpm"):
        if field in changes and changes[field] != getattr(connection, field):
            changed[field] = {"from": getattr(connection, field), "to": changes[field]}
            setattr(connection, field, changes[field])
    _validate_api_key(api_key or "")
    _validate_connection(connection, api_key_given=bool(api_key))
    if api_key:
        connection.set_api_key(api_key)
    if api_key or connection.base_url != endpoint_before:
        # Another account or server may offer other models: fetch the catalog afresh on next use.
        connection.models_cache, connection.models_fetched_at = [], None
    connection.save()
    # The log says which fields changed and to what; a new key is its own entry and only its masked hint shows.
    if changed:
        audit_record(actor=actor, action=Action.CONNECTION_CHANGED, target=connection, details={"changed": changed})
    if api_key:
        audit_record(
            actor=actor,
            action=Action.CONNECTION_KEY_ROTATED,
            target=connection,
            details={"hint": connection.api_key_hint},
        )
    return connection


@transaction.atomic
def connection_delete(*, connection: Connection, actor=None) -> None:
    audit_record(actor=actor, action=Action.CONNECTION_DELETED, target=connection, details={"kind": connection.kind})
    connection.delete()


def connection_keys_rotate() -> int:
    """Re-encrypt every stored key with the newest FIELD_ENCRYPTION_KEYS entry; returns how many."""
    count = 0
    for connection in Connection.objects.exclude(api_key_encrypted="").only("pk", "api_key_encrypted").iterator():
        rotated = crypto.rotate(connection.api_key_encrypted)
        Connection.objects.filter(pk=connection.pk).update(api_key_encrypted=rotated)
        count += 1
    return count


def workspace_mark_worker_seen(*, workspace_id: int) -> None:
    Workspace.objects.filter(pk=workspace_id).update(worker_seen_at=timezone.now())
