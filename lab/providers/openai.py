"""OpenAI chat completions: the OpenAI adapter and, with a configurable base URL, any OpenAI-compatible server.

The protocol: POST {base}/chat/completions with `stream: true` and `stream_options.include_usage`, so the
last chunk carries the token counts; `data: [DONE]` ends the stream; an error may arrive as a data chunk
`{"error": {...}}` in the middle of a stream. GET {base}/models lists the models.
"""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from typing import Any

from .base import (
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
from .params import set_params
from .tools import openai_tool_choice

# OpenAI's /models also lists embedding, speech, image and moderation models; none can answer a chat.
NOT_CHAT = re.compile(r"embedding|tts|whisper|dall-e|moderation|davinci|babbage|transcribe|realtime|audio|image|sora")


def chunk_error(error: Any) -> StreamError:
    if isinstance(error, dict):
        code = error.get("code")
        return StreamError(
            str(error.get("message") or error.get("type") or "The provider reported an error."),
            status=code if isinstance(code, int) else None,
        )
    return StreamError(str(error))


class OpenAIStreamParser:
    """Chunks → events. The finish reason comes before the usage chunk, so Finish waits for [DONE] or the end."""

    def __init__(self) -> None:
        self.finish: str | None = None
        self.usage: Usage | None = None

    def feed(self, sse: SSEEvent) -> list[StreamEvent]:
        if sse.data.strip() == "[DONE]":
            return self.end()
        chunk = json.loads(sse.data)
        if chunk.get("error"):
            return [chunk_error(chunk["error"])]
        if usage := chunk.get("usage"):
            self.usage = Usage(usage.get("prompt_tokens"), usage.get("completion_tokens"))
        events: list[StreamEvent] = []
        for choice in chunk.get("choices") or []:
            if choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            if text := delta.get("content"):
                events.append(TextDelta(text))
            for call in delta.get("tool_calls") or []:
                function = call.get("function") or {}
                events.append(
                    ToolCallDelta(
                        index=call.get("index", 0),
                        id=call.get("id") or "",
                        name=function.get("name") or "",
                        arguments=function.get("arguments") or "",
                    )
                )
            if choice.get("finish_reason"):
                self.finish = choice["finish_reason"]
        return events

    def end(self) -> list[StreamEvent]:
        if self.finish is None:
            return [StreamError("The stream ended before the answer was finished.")]
        return [*([self.usage] if self.usage else []), Finish(self.finish)]


def wire_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The messages as chat completions takes them: `{role, content}` in order, system first, a trailing assistant
    message as it is (OpenRouter continues it; the lab refuses one for kinds that do not: message_rules). A content
    holding an image is a list of parts. An assistant message's tool calls go as `tool_calls`, and a tool result as
    `{"role": "tool", "tool_call_id", "content"}`."""
    return [_wire_message(message) for message in messages]


def _wire_message(message: dict[str, Any]) -> dict[str, Any]:
    if message["role"] == "tool":
        return {"role": "tool", "tool_call_id": message["tool_call_id"], "content": message["content"]}
    wire = {"role": message["role"], "content": _wire_content(message["content"])}
    if message.get("tool_calls"):
        wire["tool_calls"] = [
            {"id": c["id"], "type": "function", "function": {"name": c["name"], "arguments": c["arguments"]}}
            for c in message["tool_calls"]
        ]
        wire["content"] = wire["content"] or None
    return wire


def _wire_content(content: Any) -> Any:
    """Text as it is; parts as chat completions' `text` and `image_url` parts (the image inline as a data URL)."""
    if not isinstance(content, list):
        return content
    return [
        {"type": "image_url", "image_url": {"url": f"data:{part['media_type']};base64,{part['data']}"}}
        if part["type"] == "image"
        else {"type": "text", "text": part["text"]}
        for part in content
    ]


def is_strict_schema(schema: Any) -> bool:
    """Whether OpenAI's strict mode accepts the schema: every object closed and every property required."""
    if isinstance(schema, list):
        return all(is_strict_schema(item) for item in schema)
    if not isinstance(schema, dict):
        return True
    if schema.get("type") == "object":
        properties = schema.get("properties") or {}
        if schema.get("additionalProperties") is not False or set(schema.get("required") or []) != set(properties):
            return False
    return all(is_strict_schema(value) for value in schema.values())


class OpenAICompatibleAdapter(HttpAdapter):
    """Any OpenAI-protocol server (Ollama, vLLM, LM Studio, llama.cpp) at its base URL; the key is optional."""

    max_tokens_field = "max_tokens"

    def headers(self) -> dict[str, str]:
        headers = {"content-type": "application/json"}
        if self.config.api_key:
            headers["authorization"] = f"Bearer {self.config.api_key}"
        return headers

    def body(self, request: ChatRequest, *, stream: bool) -> dict[str, Any]:
        names = {"max_tokens": self.max_tokens_field}
        body: dict[str, Any] = {"model": request.model, "messages": wire_messages(request.messages)}
        body.update({names.get(name, name): value for name, value in set_params(request.params).items()})
        if request.tools:
            body["tools"] = request.tools
            if (choice := openai_tool_choice(request.tool_choice)) is not None:
                body["tool_choice"] = choice
        if schema := request.response_schema:
            body["response_format"] = {"type": "json_schema", "json_schema": schema}
        if stream:
            body["stream"] = True
            body["stream_options"] = {"include_usage": True}
        return body

    def stream(self, request: ChatRequest, *, model_info: ModelInfo | None = None) -> AsyncIterator[StreamEvent]:
        body = self.body(request, stream=True)
        return self.stream_events(f"{self.base_url}/chat/completions", body, OpenAIStreamParser)

    async def complete(
        self, request: ChatRequest, *, json_schema: dict | None = None, model_info: ModelInfo | None = None
    ) -> Completion:
        body = self.body(request, stream=False)
        if json_schema is not None:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": "response", "schema": json_schema, "strict": is_strict_schema(json_schema)},
            }
        data = await self.request_json("POST", f"{self.base_url}/chat/completions", json_body=body)
        try:
            choice = data["choices"][0]
            message = choice["message"]
            usage = data.get("usage") or {}
        except (KeyError, IndexError, TypeError):
            raise ProviderError(f"{self.config.name} sent a completion without choices.") from None
        if message.get("refusal"):
            raise ProviderError(self.scrub(f"{self.config.name} refused: {message['refusal']}"))
        calls = tuple(
            {"id": c.get("id") or "", "name": (c.get("function") or {}).get("name") or ""}
            | {"arguments": (c.get("function") or {}).get("arguments") or ""}
            for c in message.get("tool_calls") or []
        )
        return Completion(
            text=message.get("content") or "",
            finish_reason=choice.get("finish_reason") or "stop",
            usage=Usage(usage.get("prompt_tokens"), usage.get("completion_tokens")),
            tool_calls=calls,
        )

    async def list_models(self) -> list[ModelInfo]:
        data = await self.request_json("GET", f"{self.base_url}/models")
        entries = data.get("data") if isinstance(data, dict) else None
        if not isinstance(entries, list):
            raise ProviderError(f"{self.config.name} sent a model list in an unknown shape.")
        usable = [
            entry for entry in entries if isinstance(entry, dict) and entry.get("id") and self.is_chat_model(entry)
        ]
        return sorted((self.model_info(entry) for entry in usable), key=lambda m: m.id)

    def is_chat_model(self, entry: dict) -> bool:
        return True

    def model_info(self, entry: dict) -> ModelInfo:
        return ModelInfo(id=entry["id"], name=entry.get("name") or entry["id"])


class OpenAIAdapter(OpenAICompatibleAdapter):
    """OpenAI itself: `max_completion_tokens` (reasoning models refuse `max_tokens`), chat models only, list prices."""

    default_base_url = "https://api.openai.com/v1"
    max_tokens_field = "max_completion_tokens"

    def is_chat_model(self, entry: dict) -> bool:
        return not NOT_CHAT.search(entry["id"])

    def model_info(self, entry: dict) -> ModelInfo:
        known = known_model(entry["id"])
        return ModelInfo(
            id=entry["id"],
            name=entry["id"],
            input_price_per_mtok=known.input_price_per_mtok if known else None,
            output_price_per_mtok=known.output_price_per_mtok if known else None,
        )
