"""Connections from the environment, as the providers' SDKs read it: `OPENAI_API_KEY` and `OPENAI_BASE_URL`,
`ANTHROPIC_*`, `GEMINI_*`, `OPENROUTER_*`.

The command line calls `connections_from_environment` for the workspace it runs in, so a file naming
`openai:gpt-4o-mini` runs on a lab whose workspace was made before the key was set. A variable makes the
connection named after its provider (`openai`, …) or updates it. Base URLs follow the SDKs' conventions: the
Anthropic and Gemini SDKs take the host without the API version, so `/v1` (Anthropic) and `/v1beta` (Gemini) are
added when missing; OpenAI's and OpenRouter's include it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from django.db import transaction

from .models import Connection, ConnectionKind, Workspace
from .services import connection_create, connection_update


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
    name: str  # the connection's name
    action: str  # "created", "updated" or "unchanged"; "skipped" when it cannot be made
    variables: tuple[str, ...]
    detail: str = ""

    def describe(self) -> str:
        text = f"{self.name} {self.action} from {', '.join(self.variables)}"
        return f"{text}: {self.detail}" if self.detail else text


def base_url_from(provider: Provider, value: str) -> str:
    url = value.strip().rstrip("/")
    if provider.version and not (url.endswith(provider.version) or url.endswith("/v1")):
        url += provider.version
    return url


@transaction.atomic
def connections_from_environment(*, workspace: Workspace, environ: Mapping[str, str]) -> list[FromEnvironment]:
    """Make or update the workspace's connection of each provider whose variables are set; says what it did."""
    done = []
    for provider in PROVIDERS:
        key = environ.get(f"{provider.prefix}_API_KEY", "").strip()
        url = environ.get(f"{provider.prefix}_BASE_URL", "").strip()
        if not key and not url:
            continue
        names = tuple(f"{provider.prefix}_{part}" for part, value in (("API_KEY", key), ("BASE_URL", url)) if value)
        done.append(_apply(workspace, provider, key, base_url_from(provider, url) if url else "", names))
    return done


def _apply(workspace: Workspace, provider: Provider, key: str, url: str, names: tuple[str, ...]) -> FromEnvironment:
    name = str(provider.kind)
    connection = Connection.objects.select_for_update().filter(workspace=workspace, name=name).first()
    if connection is None:
        if not key:
            detail = f"a new {name} connection needs {provider.prefix}_API_KEY as well"
            return FromEnvironment(name, "skipped", names, detail)
        connection_create(workspace=workspace, name=name, kind=provider.kind, base_url=url, api_key=key)
        return FromEnvironment(name, "created", names)
    if connection.kind != provider.kind:
        detail = f"the workspace's connection named {name} is of kind {connection.kind}; left as it is"
        return FromEnvironment(name, "skipped", names, detail)
    changes = {}
    if url and url != connection.base_url:
        changes["base_url"] = url
    if key and key != connection.api_key():
        changes["api_key"] = key
    if not changes:
        return FromEnvironment(name, "unchanged", names)
    connection_update(connection=connection, **changes)
    return FromEnvironment(name, "updated", names)
