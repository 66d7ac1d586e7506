"""The connections a promptfoo config runs on, from the variables promptfoo reads, private to the person running it.

`OPENAI_API_KEY`, `OPENAI_BASE_URL` (or `OPENAI_API_BASE_URL`), `ANTHROPIC_API_KEY`, `ANTHROPIC_BASE_URL`,
`GOOGLE_API_KEY` (or `GEMINI_API_KEY`), `OPENROUTER_API_KEY` go through lab.connection_env, as for the lab's own
files; `ollama:chat:` providers run on an OpenAI-compatible connection at `OLLAMA_BASE_URL` (promptfoo's default
`http://localhost:11434` without it) and a provider's `config.apiBaseUrl` on one at that URL with `OPENAI_API_KEY`.
Each is the person's own (lab.connection_env): the workspace's shared connections are never changed.
"""

from __future__ import annotations

from collections.abc import Mapping

from lab.connection_env import FromEnvironment, connections_from_environment, private_server_connection

from .providers import OLLAMA, ProviderSpec

OLLAMA_DEFAULT = "http://localhost:11434"
# promptfoo's spelling → the one lab.connection_env reads, used when the latter is not set.
ALIASES = (("OPENAI_API_BASE_URL", "OPENAI_BASE_URL"), ("GOOGLE_API_KEY", "GEMINI_API_KEY"))


def promptfoo_environment(environ: Mapping[str, str]) -> dict[str, str]:
    names = dict(environ)
    for theirs, ours in ALIASES:
        if not names.get(ours, "").strip() and names.get(theirs, "").strip():
            names[ours] = names[theirs]
    return names


def promptfoo_connections(
    *, workspace, user, environ: Mapping[str, str], providers: list[ProviderSpec]
) -> list[FromEnvironment]:
    """Make or update the person's private connections the providers need; what was done, one entry each."""
    done = connections_from_environment(workspace=workspace, user=user, environ=promptfoo_environment(environ))
    servers: dict[str, FromEnvironment] = {}
    for provider in providers:
        if provider.connection == OLLAMA:
            url = (environ.get("OLLAMA_BASE_URL", "").strip() or OLLAMA_DEFAULT).rstrip("/")
            url = url if url.endswith("/v1") else f"{url}/v1"
            key, variables = environ.get("OLLAMA_API_KEY", "").strip(), ("OLLAMA_BASE_URL",)
        elif provider.base_url:
            url, key, variables = provider.base_url, environ.get("OPENAI_API_KEY", "").strip(), ("apiBaseUrl",)
        else:
            continue
        if provider.connection not in servers:
            servers[provider.connection] = private_server_connection(
                workspace=workspace, user=user, stem=provider.connection, base_url=url, key=key, variables=variables
            )
    return done + list(servers.values())
