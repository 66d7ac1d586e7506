"""Anthropic Messages API: SSE events message_start → content_block_delta… → message_delta → message_stop.

The system prompt goes top-level (`system`), `max_tokens` is required (the user's value, else the model's
maximum, else 8192), there is no seed, and structured output is a forced tool call whose input is the JSON.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from functools import partial
from typing import Any

from .base import (
    PARAMETERS,
    ChatRequest,
    Completion,
    Finish,
    ModelInfo,
    ProviderError,
    StreamError,
    StreamEvent,
    TextDelta,
    ToolCallDelta,
    Usage,
)
from .http import HttpAdapter, SSEEvent
from .known_models import known_model
from .message_rules import TOOL_ROLE, alternating, content_text, has_tool_turns, is_prefill
from .params import set_params
from .tools import anthropic_tools, call_arguments

API_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 8192
SUPPORTED_PARAMS = frozenset(PARAMETERS) - {"seed", "presence_penalty", "frequency_penalty"}
FINISH_REASONS = {"end_turn": "stop", "stop_sequence": "stop", "max_tokens": "length", "refusal": "content_filter"}
ERROR_STATUS = {
    "invalid_request_error": 400,
    "authentication_error": 401,
    "permission_error": 403,
    "not_found_error": 404,
    "request_too_large": 413,
    "rate_limit_error": 429,
    "api_error": 500,
    "overloaded_error": 529,
}
JSON_TOOL = "respond"


def _input_tokens(usage: dict) -> int | None:
    if usage.get("input_tokens") is None:
        return None
    cached = (usage.get("cache_creation_input_tokens") or 0) + (usage.get("cache_read_input_tokens") or 0)
    return usage["input_tokens"] + cached


class AnthropicStreamParser:
    """Events → stream events. A `tool_use` block is a tool call (its input arrives as `input_json_delta`
    fragments), except the forced tool of a response schema (`json_tool`), whose input is the answer's text."""

    def __init__(self, json_tool: str = "") -> None:
        self.input_tokens: int | None = None
        self.output_tokens: int | None = None
        self.finish: str | None = None
        self.json_tool = json_tool
        self.calls: dict[int, int] = {}  # content block index → tool call index
        self.json_blocks: set[int] = set()

    def feed(self, sse: SSEEvent) -> list[StreamEvent]:
        payload = json.loads(sse.data)
        kind = payload.get("type") or sse.event
        if kind == "message_start":
            usage = payload["message"].get("usage") or {}
            self.input_tokens, self.output_tokens = _input_tokens(usage), usage.get("output_tokens")
        elif kind == "content_block_start":
            return self._block_start(payload)
        elif kind == "content_block_delta":
            delta = payload.get("delta") or {}
            if delta.get("type") == "text_delta" and delta.get("text"):
                return [TextDelta(delta["text"])]
            if delta.get("type") == "input_json_delta" and delta.get("partial_json"):
                block = payload.get("index", 0)
                if block in self.json_blocks:
                    return [TextDelta(delta["partial_json"])]
                if block in self.calls:
                    return [ToolCallDelta(index=self.calls[block], arguments=delta["partial_json"])]
        elif kind == "message_delta":
            stop_reason = (payload.get("delta") or {}).get("stop_reason")
            self.finish = FINISH_REASONS.get(stop_reason, stop_reason) if stop_reason else self.finish
            usage = payload.get("usage") or {}
            self.output_tokens = usage.get("output_tokens", self.output_tokens)
            self.input_tokens = _input_tokens(usage) or self.input_tokens
        elif kind == "message_stop":
            return self.end()
        elif kind == "error":
            error = payload.get("error") or {}
            return [StreamError(str(error.get("message") or error.get("type")), ERROR_STATUS.get(error.get("type")))]
        return []  # ping, content_block_stop, thinking deltas

    def _block_start(self, payload: dict) -> list[StreamEvent]:
        block = payload.get("content_block") or {}
        if block.get("type") != "tool_use":
            return []
        index = payload.get("index", 0)
        if self.json_tool and block.get("name") == self.json_tool:
            self.json_blocks.add(index)
            return []
        self.calls[index] = len(self.calls)
        return [ToolCallDelta(index=self.calls[index], id=block.get("id") or "", name=block.get("name") or "")]

    def end(self) -> list[StreamEvent]:
        if self.finish is None:
            return [StreamError("The stream ended before the answer was finished.")]
        return [Usage(self.input_tokens, self.output_tokens), Finish(self.finish)]


def wire_messages(messages: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """(top-level `system`, `messages`): system text apart, the rest alternating user/assistant (adjacent ones of
    one role merged, message_rules). A trailing assistant message is the prefill the model continues; the API
    refuses one that ends in whitespace, so that is trimmed."""
    system = "\n\n".join(content_text(m["content"]) for m in messages if m["role"] == "system")
    if has_tool_turns(messages):
        return system, _tool_turns(messages)
    turns = [{"role": m["role"], "content": _wire_content(m["content"])} for m in alternating(messages)]
    if is_prefill(turns):
        turns[-1]["content"] = turns[-1]["content"].rstrip()
    return system, turns


def _tool_turns(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A conversation with a tool loop, block by block: an assistant message's calls as `tool_use` blocks after its
    text, each result as a `tool_result` block in a user turn; adjacent turns of one role are joined."""
    turns: list[dict[str, Any]] = []
    for message in messages:
        if message["role"] == "system":
            continue
        role = "user" if message["role"] == TOOL_ROLE else message["role"]
        if message["role"] == TOOL_ROLE:
            blocks = [{"type": "tool_result", "tool_use_id": message["tool_call_id"], "content": message["content"]}]
        else:
            content = _wire_content(message["content"])
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) and content else []
            blocks += content if isinstance(content, list) else []
            blocks += [
                {"type": "tool_use", "id": c["id"], "name": c["name"], "input": call_arguments(c["arguments"])}
                for c in message.get("tool_calls") or []
            ]
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"] += blocks
        else:
            turns.append({"role": role, "content": blocks})
    return turns


def _wire_content(content: Any) -> Any:
    """Text as it is; parts as Messages' `text` and `image` blocks (a base64 source)."""
    if not isinstance(content, list):
        return content
    return [
        {"type": "image", "source": {"type": "base64", "media_type": part["media_type"], "data": part["data"]}}
        if part["type"] == "image"
        else {"type": "text", "text": part["text"]}
        for part in content
    ]


class AnthropicAdapter(HttpAdapter):
    default_base_url = "https://api.anthropic.com/v1"

    def headers(self) -> dict[str, str]:
        return {"content-type": "application/json", "x-api-key": self.config.api_key, "anthropic-version": API_VERSION}

    def body(self, request: ChatRequest, model_info: ModelInfo | None, *, stream: bool) -> dict[str, Any]:
        params = set_params(request.params)
        system, messages = wire_messages(request.messages)
        body: dict[str, Any] = {
            "model": request.model,
            "messages": messages,
            "max_tokens": params.get("max_tokens") or max_output_tokens(request.model, model_info),
        }
        if system:
            body["system"] = system
        for name in ("temperature", "top_p", "top_k"):
            if name in params:
                body[name] = params[name]
        if "stop" in params:
            body["stop_sequences"] = [params["stop"]] if isinstance(params["stop"], str) else list(params["stop"])
        if request.tools:
            body.update(anthropic_tools(request.tools, request.tool_choice))
        if schema := request.response_schema:
            # Structured output through a forced tool named after the schema: its input is the answer.
            forced = {"name": schema["name"], "description": "Give the answer in this structure."}
            body["tools"] = [*body.get("tools", []), {**forced, "input_schema": schema["schema"]}]
            body["tool_choice"] = {"type": "tool", "name": schema["name"]}
        if stream:
            body["stream"] = True
        return body

    def stream(self, request: ChatRequest, *, model_info: ModelInfo | None = None) -> AsyncIterator[StreamEvent]:
        body = self.body(request, model_info, stream=True)
        json_tool = request.response_schema["name"] if request.response_schema else ""
        parser = partial(AnthropicStreamParser, json_tool)
        return self.stream_events(f"{self.base_url}/messages", body, parser)

    async def complete(
        self, request: ChatRequest, *, json_schema: dict | None = None, model_info: ModelInfo | None = None
    ) -> Completion:
        body = self.body(request, model_info, stream=False)
        if json_schema is not None:
            body["tools"] = [
                {"name": JSON_TOOL, "description": "Give the answer in this structure.", "input_schema": json_schema}
            ]
            body["tool_choice"] = {"type": "tool", "name": JSON_TOOL}
        data = await self.request_json("POST", f"{self.base_url}/messages", json_body=body)
        blocks = data.get("content") if isinstance(data, dict) else None
        if not isinstance(blocks, list):
            raise ProviderError(f"{self.config.name} sent a message without content.")
        # The structured answer is the input of the forced tool (the judge's or the response schema's); any other
        # tool_use block is a call the model made.
        forced = request.response_schema["name"] if request.response_schema else JSON_TOOL
        uses = [b for b in blocks if b.get("type") == "tool_use"]
        tool = next((b for b in uses if b.get("name") == forced), None)
        text = (
            json.dumps(tool.get("input"))
            if tool
            else "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
        )
        calls = tuple(
            {"id": b.get("id") or "", "name": b.get("name") or "", "arguments": json.dumps(b.get("input") or {})}
            for b in uses
            if b is not tool
        )
        usage = data.get("usage") or {}
        reason = data.get("stop_reason") or "end_turn"
        return Completion(
            text=text,
            finish_reason="stop" if tool else FINISH_REASONS.get(reason, reason),
            usage=Usage(_input_tokens(usage), usage.get("output_tokens")),
            tool_calls=calls,
        )

    async def list_models(self) -> list[ModelInfo]:
        models, after = [], None
        while True:
            params = {"limit": 1000, **({"after_id": after} if after else {})}
            data = await self.request_json("GET", f"{self.base_url}/models", params=params)
            if not isinstance(data, dict) or not isinstance(data.get("data"), list):
                raise ProviderError(f"{self.config.name} sent a model list in an unknown shape.")
            models += [self.model_info(entry) for entry in data["data"] if isinstance(entry, dict) and entry.get("id")]
            if not data.get("has_more") or not data.get("last_id"):
                return sorted(models, key=lambda m: m.id)
            after = data["last_id"]

    def model_info(self, entry: dict) -> ModelInfo:
        known = known_model(entry["id"])
        return ModelInfo(
            id=entry["id"],
            name=entry.get("display_name") or entry["id"],
            max_output_tokens=known.max_output_tokens if known else None,
            supported_params=SUPPORTED_PARAMS,
            input_price_per_mtok=known.input_price_per_mtok if known else None,
            output_price_per_mtok=known.output_price_per_mtok if known else None,
        )


def max_output_tokens(model: str, model_info: ModelInfo | None) -> int:
    """What to send as the required max_tokens when the user set none: the model's own maximum."""
    if model_info is not None and model_info.max_output_tokens:
        return model_info.max_output_tokens
    known = known_model(model)
    return known.max_output_tokens if known and known.max_output_tokens else DEFAULT_MAX_TOKENS
