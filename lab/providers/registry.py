"""Which adapter speaks for which connection kind."""

from __future__ import annotations

import httpx

from .anthropic import AnthropicAdapter
from .base import Adapter, ConnectionConfig
from .gemini import GeminiAdapter
from .http import HttpAdapter, RetryPolicy
from .openai import OpenAIAdapter, OpenAICompatibleAdapter
from .openrouter import OpenRouterAdapter
from .simulated import SimulatedAdapter

_ADAPTERS: dict[str, type] = {
    "simulated": SimulatedAdapter,
    "openai": OpenAIAdapter,
    "openai_compatible": OpenAICompatibleAdapter,
    "openrouter": OpenRouterAdapter,
    "anthropic": AnthropicAdapter,
    "gemini": GeminiAdapter,
}


def register(kind: str, adapter_class: type) -> None:
    _ADAPTERS[kind] = adapter_class


def get_adapter(
    config: ConnectionConfig, client: httpx.AsyncClient | None = None, *, retry: RetryPolicy | None = None
) -> Adapter:
    """The adapter for `config.kind`; `client` is shared across calls when given, `retry` tunes HTTP retries."""
    try:
        adapter_class = _ADAPTERS[config.kind]
    except KeyError:
        raise ValueError(f"No adapter for connection kind {config.kind!r}.") from None
    if issubclass(adapter_class, HttpAdapter):
        return adapter_class(config, client=client, retry=retry)
    return adapter_class(config, client=client)
