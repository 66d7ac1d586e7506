"""Google Gemini: `models/{model}:streamGenerateContent?alt=sse`, usage in `usageMetadata`.

The key travels in the `x-goog-api-key` header, never in the query string, so no URL (in a log line or an
exception) can carry it. Every chunk is a full `GenerateContentResponse`; the stream simply ends after the
chunk with a `finishReason`.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import quote

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
from .message_rules import TOOL_ROLE, alternating, content_text, has_tool_turns
from .params import set_params
from .tools import call_arguments, gemini_tools

PARAM_NAMES = {
    "temperature": "temperature",
    "top_p": "topP",
    "top_k": "topK",
    "presence_penalty": "presencePenalty",
    "frequency_penalty": "frequencyPenalty",
    "max_tokens": "maxOutputTokens",
    "seed": "seed",
    "stop": "stopSequences",
}
FINISH_REASONS = {"STOP": "stop", "MAX_TOKENS": "length"}
FILTERED = {"SAFETY", "RECITATION", "BLOCKLIST", "PROHIBITED_CONTENT", "SPII", "IMAGE_SAFETY"}


def finish_reason(reason: str) -> str:
    return "content_filter" if reason in FILTERED else FINISH_REASONS.get(reason, reason.lower())


def usage_of(metadata: dict) -> Usage:
    # Thinking tokens are billed as output, so they count as output here too.
    output = metadata.get("candidatesTokenCount")
    if output is not None or metadata.get("thoughtsTokenCount") is not None:
        output = (output or 0) + (metadata.get("thoughtsTokenCount") or 0)
    return Usage(metadata.get("promptTokenCount"), output)


def texts_of(response: dict) -> tuple[list[str], str | None]:
    """The answer's text parts (thoughts left out) and the finish reason, if this chunk has one."""
    candidates = response.get("candidates") or []
    if not candidates:
        return [], None
    candidate = candidates[0]
    parts = (candidate.get("content") or {}).get("parts") or []
    return [p["text"] for p in parts if p.get("text") and not p.get("thought")], candidate.get("finishReason")


def calls_of(response: dict) -> list[dict]:
    """The answer's `functionCall` parts (Gemini sends each call whole)."""
    candidates = response.get("candidates") or []
    parts = ((candidates[0].get("content") or {}).get("parts") or []) if candidates else []
    return [p["functionCall"] for p in parts if isinstance(p.get("functionCall"), dict)]


class GeminiStreamParser:
    def __init__(self) -> None:
        self.usage: Usage | None = None
        self.finish: str | None = None
        self.calls = 0

    def feed(self, sse: SSEEvent) -> list[StreamEvent]:
        chunk = json.loads(sse.data)
        if chunk.get("error"):
            error = chunk["error"]
            return [StreamError(str(error.get("message") or error.get("status")), error.get("code"))]
        if block := (chunk.get("promptFeedback") or {}).get("blockReason"):
            return [StreamError(f"Gemini blocked the prompt ({block}).")]
        if chunk.get("usageMetadata"):
            self.usage = usage_of(chunk["usageMetadata"])
        texts, reason = texts_of(chunk)
        if reason:
            self.finish = finish_reason(reason)
        events: list[StreamEvent] = [TextDelta(text) for text in texts]
        for call in calls_of(chunk):
            events.append(
                ToolCallDelta(
                    index=self.calls,
                    id=call.get("id") or f"call_{self.calls}",
                    name=call.get("name") or "",
                    arguments=json.dumps(call.get("args") or {}),
                )
            )
            self.calls += 1
        return events

    def end(self) -> list[StreamEvent]:
        if self.finish is None:
            return [StreamError("The stream ended before the answer was finished.")]
        return [*([self.usage] if self.usage else []), Finish(self.finish)]


def wire_messages(messages: list[dict[str, Any]]) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """(`systemInstruction` or None, `contents`): the system text apart, the rest alternating `user`/`model` turns
    (adjacent ones of one role merged, message_rules), a trailing `model` turn being the prefill it continues."""
    system = "\n\n".join(content_text(m["content"]) for m in messages if m["role"] == "system")
    if has_tool_turns(messages):
        return ({"parts": [{"text": system}]} if system else None), _tool_contents(messages)
    contents = [
        {"role": "model" if m["role"] == "assistant" else "user", "parts": _wire_parts(m["content"])}
        for m in alternating(messages)
    ]
    return ({"parts": [{"text": system}]} if system else None), contents


def _tool_contents(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A conversation with a tool loop: calls as `functionCall` parts of the model's turn, each result as a
    `functionResponse` part of a user turn (named after its call's tool); adjacent turns of one role joined."""
    names = {c["id"]: c["name"] for m in messages for c in m.get("tool_calls") or []}
    contents: list[dict[str, Any]] = []
    for message in messages:
        if message["role"] == "system":
            continue
        if message["role"] == TOOL_ROLE:
            role = "user"
            response = {"name": names.get(message["tool_call_id"], ""), "response": {"content": message["content"]}}
            parts = [{"functionResponse": response}]
        else:
            role = "model" if message["role"] == "assistant" else "user"
            parts = _wire_parts(message["content"]) if message["content"] else []
            parts += [
                {"functionCall": {"name": c["name"], "args": call_arguments(c["arguments"])}}
                for c in message.get("tool_calls") or []
            ]
        if contents and contents[-1]["role"] == role:
            contents[-1]["parts"] += parts
        else:
            contents.append({"role": role, "parts": parts})
    return contents


def _wire_parts(content: Any) -> list[dict[str, Any]]:
    """Text as one `text` part; parts as `text` and `inline_data` parts (base64), in their order."""
    if not isinstance(content, list):
        return [{"text": content}]
    return [
        {"inline_data": {"mime_type": part["media_type"], "data": part["data"]}}
        if part["type"] == "image"
        else {"text": part["text"]}
        for part in content
    ]


class GeminiAdapter(HttpAdapter):
    default_base_url = "https://generativelanguage.googleapis.com/v1beta"

    def headers(self) -> dict[str, str]:
        return {"content-type": "application/json", "x-goog-api-key": self.config.api_key}

    def url(self, model: str, method: str) -> str:
        return f"{self.base_url}/models/{quote(model.removeprefix('models/'), safe='')}:{method}"

    def body(self, request: ChatRequest) -> dict[str, Any]:
        system, contents = wire_messages(request.messages)
        body: dict[str, Any] = {"contents": contents}
        if system is not None:
            body["systemInstruction"] = system
        config = {PARAM_NAMES[name]: value for name, value in set_params(request.params).items()}
        if isinstance(config.get("stopSequences"), str):
            config["stopSequences"] = [config["stopSequences"]]
        if schema := request.response_schema:
            config.update({"responseMimeType": "application/json", "responseSchema": schema["schema"]})
        if config:
            body["generationConfig"] = config
        if request.tools:
            body.update(gemini_tools(request.tools, request.tool_choice))
        return body

    def stream(self, request: ChatRequest, *, model_info: ModelInfo | None = None) -> AsyncIterator[StreamEvent]:
        url = self.url(request.model, "streamGenerateContent")
        return self.stream_events(url, self.body(request), GeminiStreamParser, params={"alt": "sse"})

    async def complete(
        self, request: ChatRequest, *, json_schema: dict | None = None, model_info: ModelInfo | None = None
    ) -> Completion:
        body = self.body(request)
        if json_schema is not None:
            body.setdefault("generationConfig", {}).update(
                {"responseMimeType": "application/json", "responseJsonSchema": json_schema}
            )
        data = await self.request_json("POST", self.url(request.model, "generateContent"), json_body=body)
        if not isinstance(data, dict) or not data.get("candidates"):
            block = (data.get("promptFeedback") or {}).get("blockReason") if isinstance(data, dict) else None
            raise ProviderError(f"Gemini blocked the prompt ({block})." if block else "Gemini sent no candidates.")
        texts, reason = texts_of(data)
        calls = tuple(
            {"id": call.get("id") or f"call_{index}", "name": call.get("name") or ""}
            | {"arguments": json.dumps(call.get("args") or {})}
            for index, call in enumerate(calls_of(data))
        )
        return Completion(
            text="".join(texts),
            finish_reason=finish_reason(reason or "STOP"),
            usage=usage_of(data.get("usageMetadata") or {}),
            tool_calls=calls,
        )

    async def list_models(self) -> list[ModelInfo]:
        models, token = [], None
        while True:
            params = {"pageSize": 1000, **({"pageToken": token} if token else {})}
            data = await self.request_json("GET", f"{self.base_url}/models", params=params)
            if not isinstance(data, dict) or not isinstance(data.get("models", []), list):
                raise ProviderError(f"{self.config.name} sent a model list in an unknown shape.")
            models += [
                self.model_info(entry)
                for entry in data.get("models", [])
                if isinstance(entry, dict)
                and entry.get("name")
                and "generateContent" in (entry.get("supportedGenerationMethods") or [])
            ]
            token = data.get("nextPageToken")
            if not token:
                return sorted(models, key=lambda m: m.id)

    def model_info(self, entry: dict) -> ModelInfo:
        model = entry["name"].removeprefix("models/")
        known = known_model(model)
        return ModelInfo(
            id=model,
            name=entry.get("displayName") or model,
            context_length=entry.get("inputTokenLimit"),
            max_output_tokens=entry.get("outputTokenLimit"),
            input_price_per_mtok=known.input_price_per_mtok if known else None,
            output_price_per_mtok=known.output_price_per_mtok if known else None,
        )
