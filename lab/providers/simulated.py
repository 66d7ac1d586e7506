"""The simulated provider: built in, offline and deterministic, for demos and fast tests.

An answer depends only on (model, prompt, seed, temperature), so the same round gives the same text; what it
says follows the prompt's simple instructions (simulated_text), so a judge has something to judge.
Model ids choose a preset and may tune it: `simulated::writer?ttft_ms=100&token_ms=5&tokens=40`.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import random
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import parse_qsl

from .base import (
    ChatRequest,
    Completion,
    ConnectionConfig,
    Finish,
    ModelInfo,
    ProviderError,
    StreamError,
    StreamEvent,
    TextDelta,
    Usage,
)
from .message_rules import content_text, is_prefill
from .simulated_judge import judge_reply
from .simulated_text import answer_text, topic_of


@dataclass(frozen=True)
class Preset:
    ttft_ms: int
    token_ms: int
    tokens: int
    fail_every: int = 0  # 0: never; n: one in n (by seed) fails mid-stream, keeping its partial text
    style: str = "prose"


PRESETS = {
    "instant": Preset(ttft_ms=0, token_ms=0, tokens=40),
    "writer": Preset(ttft_ms=120, token_ms=12, tokens=90),
    "thinker": Preset(ttft_ms=600, token_ms=25, tokens=140, style="steps"),
    "coder": Preset(ttft_ms=200, token_ms=10, tokens=110),
    "flaky": Preset(ttft_ms=150, token_ms=15, tokens=80, fail_every=3),
}
TUNABLE = ("ttft_ms", "token_ms", "tokens", "fail_every")


def parse_model(model: str) -> tuple[str, Preset]:
    name, _, query = model.partition("?")
    if name not in PRESETS:
        raise ValueError(f"Unknown simulated model {name!r}; choose one of {', '.join(PRESETS)}.")
    preset = PRESETS[name]
    tweaks = {}
    for key, value in parse_qsl(query):
        if key in TUNABLE and value.isdigit():
            tweaks[key] = int(value)
    return name, replace(preset, **tweaks)


def wire_messages(messages: list[dict[str, Any]]) -> list[dict[str, str]]:
    """The conversation as the simulated models read it: role and text, in order (a trailing assistant message is
    the prefill its answer continues)."""
    return [{"role": m["role"], "content": content_text(m.get("content"))} for m in messages]


def _rng(request: ChatRequest) -> random.Random:
    """The answer's random choices: fixed by the request, except that at a temperature above 0 without a seed each
    call samples afresh, as a real model does (so repeated rounds differ, and a seed makes them reproducible)."""
    if request.params.get("seed") is None and (request.params.get("temperature") or 0) > 0:
        return random.Random()
    prompt = "\n".join(m["content"] for m in wire_messages(request.messages))
    key = f"{request.model}|{request.params.get('seed')}|{request.params.get('temperature')}|{prompt}"
    return random.Random(int.from_bytes(hashlib.sha256(key.encode()).digest()[:8], "big"))


def _asked(request: ChatRequest) -> tuple[str, str, str]:
    """The last user message (what to answer), the system text and the prefill to continue ("" when none)."""
    messages = wire_messages(request.messages)
    user = next((m["content"] for m in reversed(messages) if m["role"] == "user"), "")
    system = "\n".join(m["content"] for m in messages if m["role"] == "system")
    return user, system, messages[-1]["content"] if is_prefill(messages) else ""


def continued(prefill: str, text: str) -> str:
    """The answer as the continuation of `prefill`, as a provider streams it: what comes after the prefill. An
    answer that already begins as the prefill does (`{` of a JSON object) goes on from there; else it follows it."""
    start = prefill.strip()
    if start and text.startswith(start):
        return text[len(start) :]
    return text if not prefill or prefill[-1].isspace() else " " + text


def simulated_tokens(request: ChatRequest, preset: Preset, json_schema: dict | None = None) -> list[str]:
    """The answer as a list of tokens (words with their spacing), deterministic for the request: a plausible
    answer following the prompt's simple instructions (simulated_text), or an instance of `json_schema`."""
    rng = _rng(request)
    user, system, prefill = _asked(request)
    if json_schema is not None:
        text = json.dumps(judge_reply(json_schema, rng, user, topic_of), ensure_ascii=False)
    else:
        text = answer_text(user, rng=rng, words=max(preset.tokens, 1), style=preset.style, system=system)
    text = continued(prefill, text)
    # Each word with the whitespace before it, line breaks included, so the usage reported (words) counts them.
    return re.findall(r"\s*\S+", text)


def count_tokens(text: str) -> int:
    return len(text.split())


class SimulatedAdapter:
    def __init__(self, config: ConnectionConfig, client=None):
        self.config = config

    async def stream(
        self, request: ChatRequest, *, model_info: ModelInfo | None = None, json_schema: dict | None = None
    ) -> AsyncIterator[StreamEvent]:
        try:
            _, preset = parse_model(request.model)
        except ValueError as exc:
            yield StreamError(str(exc), status=404)
            return
        tokens = simulated_tokens(request, preset, json_schema)
        limit = request.params.get("max_tokens")
        finish = "stop"
        if limit is not None and len(tokens) > int(limit):
            tokens, finish = tokens[: int(limit)], "length"
        fail_at = None
        if preset.fail_every and (int(request.params.get("seed") or 0) % preset.fail_every == 0):
            fail_at = len(tokens) // 2
        input_tokens = sum(count_tokens(m["content"]) for m in wire_messages(request.messages))
        await asyncio.sleep(preset.ttft_ms / 1000)
        emitted = []
        for i, token in enumerate(tokens):
            if fail_at is not None and i == fail_at:
                yield StreamError("Simulated provider error in the middle of the answer.", status=500)
                return
            if i and preset.token_ms:
                await asyncio.sleep(preset.token_ms / 1000)
            emitted.append(token)
            yield TextDelta(token)
        yield Usage(input_tokens=input_tokens, output_tokens=count_tokens("".join(emitted)))
        yield Finish(finish)

    async def complete(
        self, request: ChatRequest, *, json_schema: dict | None = None, model_info: ModelInfo | None = None
    ) -> Completion:
        parts, usage, finish = [], Usage(None, None), "stop"
        async for event in self.stream(request, json_schema=json_schema):
            if isinstance(event, TextDelta):
                parts.append(event.text)
            elif isinstance(event, Usage):
                usage = event
            elif isinstance(event, Finish):
                finish = event.reason
            elif isinstance(event, StreamError):
                raise ProviderError(event.message, event.status)
        return Completion(text="".join(parts), finish_reason=finish, usage=usage)

    async def list_models(self) -> list[ModelInfo]:
        return [
            ModelInfo(
                id=name,
                name=f"Simulated {name} (offline)",
                context_length=32768,
                max_output_tokens=4096,
                supported_params=None,
                input_price_per_mtok=0.0,
                output_price_per_mtok=0.0,
            )
            for name in PRESETS
        ]
