"""Connections from the environment, as the providers' SDKs read it: `OPENAI_API_KEY` and `OPENAI_BASE_URL`,
`ANTHROPIC_*`, `GEMINI_*`, `OPENROUTER_*`.

The command line calls `connections_from_environment` for the workspace it runs in and the person it runs as, so
a file naming `openai:gpt-4o-mini` runs on their own key. One person's environment never changes the team: the
variables make or update a connection private to that person (`Connection.owner`; named after the provider and
the person, e.g. `openai-alice`), and the run sends the file's `openai:` models to it. The team's connections
change only through Settings or the API. Base URLs follow the SDKs' conventions: the Anthropic and Gemini SDKs
take the host without the API version, so `/v1` (Anthropic) and `/v1beta` (Gemini) are added when missing;
OpenAI's and OpenRouter's include it. `private_server_connection` gives a person their own OpenAI-compatible server
by URL (a promptfoo config's Ollama or `apiBaseUrl` providers), by the same rule.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from django.db import transaction
from django.utils.text import slugify

from .models import Connection, ConnectionKind, Workspace
from .services import DEFAULT_BASE_URLS, connection_create, connection_update


@dataclass(frozen=True)
class Provider:
    kind: str
    prefix: str  # OPENAI → OPENAI_API_KEY, OPENAI_BASE_URL
    version: str = ""  # the path segment the SDK adds to its base URL, added here when missing


PROVIDERS = (
    Provider(ConnectionKind.OPENAI, "OPENAI"),
    Provider(ConnectionKind.ANTHROPIC, "ANTHROPIC", "/v1"),
    Provider(ConnectionKind.GEMINI, "GEMINI", "/v1beta"),
    Provider(ConnectionKind.OPENROUTER, "OPENROUTER"),
)


@dataclass(frozen=True)
class FromEnvironment:
    provider: str  # the provider's name as files write it (`openai`)
    name: str  # the private connection's name
    action: str  # "created", "updated" or "unchanged"; "skipped" when it cannot be made
    variables: tuple[str, ...]
    detail: str = ""

    @property
    def usable(self) -> bool:
        return self.action != "skipped"

    def describe(self) -> str:
        if not self.usable:
            return f"{self.provider} skipped from {', '.join(self.variables)}: {self.detail}"
        return f"{self.name} (private, for {self.provider}: models) {self.action} from {', '.join(self.variables)}"


def base_url_from(provider: Provider, value: str) -> str:
    url = value.strip().rstrip("/")
    if provider.version and not (url.endswith(provider.version) or url.endswith("/v1")):
        url += provider.version
    return url


@transaction.atomic
def connections_from_environment(*, workspace: Workspace, user, environ: Mapping[str, str]) -> list[FromEnvironment]:
    """Make or update `user`'s private connection of each provider whose variables are set; says what it did.
    The audit log names `user` for every change."""
    done = []
    for provider in PROVIDERS:
        key = environ.get(f"{provider.prefix}_API_KEY", "").strip()
        url = environ.get(f"{provider.prefix}_BASE_URL", "").strip()
        if not key and not url:
            continue
        names = tuple(f"{provider.prefix}_{part}" for part, value in (("API_KEY", key), ("BASE_URL", url)) if value)
        done.append(_apply(workspace, user, provider, key, base_url_from(provider, url) if url else "", names))
    return done


def _apply(
    workspace: Workspace, user, provider: Provider, key: str, url: str, names: tuple[str, ...]
) -> FromEnvironment:
    kind = str(provider.kind)
    if user is None:
        detail = "the workspace has no owner to run as; pass --user"
        return FromEnvironment(kind, "", "skipped", names, detail)
    mine = Connection.objects.select_for_update().filter(workspace=workspace, owner=user, kind=kind)
    connection = mine.order_by("pk").first()
    if connection is None:
        if not key:
            detail = f"a private {kind} connection needs {provider.prefix}_API_KEY as well"
            return FromEnvironment(kind, "", "skipped", names, detail)
        connection = connection_create(
            workspace=workspace,
            name=_private_name(workspace, kind, user),
            kind=kind,
            base_url=url,
            api_key=key,
            actor=user,
            owner=user,
        )
        return FromEnvironment(kind, connection.name, "created", names)
    # The connection follows the environment: without a base URL variable, the SDK's default server.
    url = url or DEFAULT_BASE_URLS.get(ConnectionKind(kind), "")
    changes = {}
    if url and url != connection.base_url:
        changes["base_url"] = url
    if key and key != connection.api_key():
        changes["api_key"] = key
    if not changes:
        return FromEnvironment(kind, connection.name, "unchanged", names)
    connection_update(connection=connection, actor=user, **changes)
    return FromEnvironment(kind, connection.name, "updated", names)


def _private_name(workspace: Workspace, kind: str, user) -> str:
    """`openai-alice`; with the person's id added when another connection has that name already."""
    name = f"{kind}-{slugify(user.username)}"[:50].rstrip("-")
    if Connection.objects.filter(workspace=workspace, name=name).exists():
        name = f"{name}-{user.pk}"
    return name


@transaction.atomic
def private_server_connection(
    *, workspace: Workspace, user, stem: str, base_url: str, key: str, variables: tuple[str, ...]
) -> FromEnvironment:
    """The person's own OpenAI-compatible server (promptfoo's Ollama, or a provider's `apiBaseUrl`): their private
    connection at that URL, made when missing (named `<stem>-<person>`), its key following `key` when one is given.
    The team's connections are never looked at, so never changed."""
    kind = str(ConnectionKind.OPENAI_COMPATIBLE)
    if user is None:
        return FromEnvironment(stem, "", "skipped", variables, "the workspace has no owner to run as; pass --user")
    mine = Connection.objects.select_for_update().filter(workspace=workspace, owner=user, kind=kind, base_url=base_url)
    connection = mine.order_by("pk").first()
    if connection is None:
        connection = connection_create(
            workspace=workspace,
            name=_private_name(workspace, stem, user),
            kind=kind,
            base_url=base_url,
            api_key=key,
            actor=user,
            owner=user,
        )
        return FromEnvironment(stem, connection.name, "created", variables)
    if key and key != connection.api_key():
        connection_update(connection=connection, actor=user, api_key=key)
        return FromEnvironment(stem, connection.name, "updated", variables)
    return FromEnvironment(stem, connection.name, "unchanged", variables)
