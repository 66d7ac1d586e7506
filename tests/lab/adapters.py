"""Helpers for the provider tests: an adapter of each HTTP kind pointed at the fake server, and a small request."""

from __future__ import annotations

import socket

import httpx

from lab.providers.base import ChatRequest, ConnectionConfig, StreamEvent
from lab.providers.http import RetryPolicy
from lab.providers.registry import get_adapter

HTTP_KINDS = ["openai", "openai_compatible", "openrouter", "anthropic", "gemini"]
KEY = "sk-test-SECRET-0123456789abcdef"
# Tiny delays keep retry tests fast; the logic is the production logic.
FAST = RetryPolicy(retries=2, base_delay=0.01, max_delay=0.05, max_retry_after=2.0)
SYSTEM, USER = "Be brief.", "Say something short."  # 2 + 3 words: the fake server counts 5 input tokens
INPUT_TOKENS = 5


def base_url_for(fake_llm, kind: str) -> str:
    return fake_llm.gemini_url if kind == "gemini" else fake_llm.openai_url


def adapter_for(fake_llm, kind: str, *, base_url: str = "", client: httpx.AsyncClient | None = None, key: str = KEY):
    config = ConnectionConfig(name=kind, kind=kind, base_url=base_url or base_url_for(fake_llm, kind), api_key=key)
    return get_adapter(config, client, retry=FAST)


def chat(model: str, **params) -> ChatRequest:
    messages = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": USER}]
    return ChatRequest(model=model, messages=messages, params=params)


async def events_of(adapter, request: ChatRequest) -> list[StreamEvent]:
    return [event async for event in adapter.stream(request)]


def closed_port_url(api: str = "v1") -> str:
    """A base URL on 127.0.0.1 where nothing listens: the port was free a moment ago."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/{api}"
