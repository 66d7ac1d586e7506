"""The three wire formats the fake server speaks: OpenAI chat completions, Anthropic messages, Gemini.

Each `Wire` reads what it needs from a request body and writes responses, SSE frames and error bodies the
way the real provider does (field names, event names, finish reasons, usage placement).
"""

from __future__ import annotations

import json
import time
from typing import Any

from lab.providers.base import PARAMETERS

# The catalog every protocol lists; OpenAI-protocol clients get it in OpenRouter's richer shape.
MODELS = (
    {
        "id": "fake",
        "name": "Fake (every parameter)",
        "context_length": 32768,
        "max_output": 4096,
        "params": list(PARAMETERS),  # every parameter a comparison may set, so none is refused
        "prompt": "0.000001",
        "completion": "0.000002",
    },
    {
        "id": "fake-reasoning",
        "name": "Fake reasoning (default sampling only)",
        "context_length": 65536,
        "max_output": 16384,
        "params": ["max_tokens", "seed", "stop"],
        "prompt": "0.000003",
        "completion": "0.000012",
    },
    {
        "id": "fake-free",
        "name": "Fake free",
        "context_length": 8192,
        "max_output": 2048,
        "params": ["temperature", "top_p", "max_tokens", "stop"],
        "prompt": "0",
        "completion": "0",
    },
)


def sse(data: Any, event: str = "", newline: str = "\n") -> bytes:
    text = data if isinstance(data, str) else json.dumps(data)
    head = f"event: {event}{newline}" if event else ""
    return f"{head}data: {text}{newline}{newline}".encode()


def sample_for(schema: dict) -> Any:
    """A value that satisfies a (simple) JSON schema, so structured-output callers get parseable JSON."""
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list) else kind
    if kind == "object" or "properties" in schema:
        return {name: sample_for(sub) for name, sub in (schema.get("properties") or {}).items()}
    if kind == "array":
        return [sample_for(schema.get("items") or {})] * max(schema.get("minItems", 1), 1)
    return {"string": "fake", "integer": 1, "number": 1.0, "boolean": True, "null": None}.get(kind, "fake")


def words(text: str) -> int:
    return len(text.split())


# Every image part counts this many input tokens, in each wire format, so a test can tell images were received.
IMAGE_TOKENS = 85
# An image part as each wire format writes it: OpenAI `image_url`, Anthropic `image`, Gemini `inline_data`.
IMAGE_PART_TYPES = {"image_url", "image"}


def part_text(part: Any) -> str:
    """The text of one content part (none for an image)."""
    return str(part.get("text", "")) if isinstance(part, dict) else str(part)


def is_image_part(part: Any) -> bool:
    return isinstance(part, dict) and (part.get("type") in IMAGE_PART_TYPES or "inline_data" in part)


def content_text(content: Any) -> str:
    """A message's text, whether its content is a string or a list of parts (images stand as `[image]`)."""
    if isinstance(content, list):
        return " ".join("[image]" if is_image_part(part) else part_text(part) for part in content)
    return str(content if content is not None else "")


def content_tokens(content: Any) -> int:
    if isinstance(content, list):
        return sum(IMAGE_TOKENS if is_image_part(part) else words(part_text(part)) for part in content)
    return words(str(content if content is not None else ""))


class OpenAIWire:
    finish = {"stop": "stop", "length": "length"}

    def model(self, body: dict, path: str) -> str:
        return str(body.get("model", ""))

    def streaming(self, body: dict, query: dict) -> bool:
        return bool(body.get("stream"))

    def max_tokens(self, body: dict) -> int | None:
        return body.get("max_completion_tokens") or body.get("max_tokens")

    def input_tokens(self, body: dict) -> int:
        return sum(content_tokens(m.get("content", "")) for m in body.get("messages") or [])

    def prompt(self, body: dict) -> str:
        return "\n".join(content_text(m.get("content", "")) for m in body.get("messages") or [])

    def sets(self, body: dict, param: str) -> bool:
        names = {"max_tokens": ("max_tokens", "max_completion_tokens")}
        return any(name in body for name in names.get(param, (param,)))

    def schema(self, body: dict) -> dict | None:
        response_format = body.get("response_format") or {}
        return (response_format.get("json_schema") or {}).get("schema")

    def error(self, status: int, message: str, kind: str) -> dict:
        return {"error": {"message": message, "type": kind, "code": kind if status == 429 else status}}

    def _chunk(self, model: str, choices: list, **extra) -> dict:
        return {
            "id": "chatcmpl-fake",
            "object": "chat.completion.chunk",
            "created": int(time.time()),
            "model": model,
            "choices": choices,
            **extra,
        }

    def stream_head(self, model: str, input_tokens: int | None) -> list[bytes]:
        # OpenRouter sends SSE comments while the model warms up; clients must skip them.
        first = self._chunk(model, [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])
        return [b": FAKE PROCESSING\n\n", sse(first)]

    def stream_delta(self, model: str, text: str) -> bytes:
        return sse(self._chunk(model, [{"index": 0, "delta": {"content": text}, "finish_reason": None}]))

    def stream_tail(self, model: str, body: dict, finish: str, usage: tuple[int, int] | None) -> list[bytes]:
        frames = [sse(self._chunk(model, [{"index": 0, "delta": {}, "finish_reason": self.finish[finish]}]))]
        if usage and (body.get("stream_options") or {}).get("include_usage"):
            counts = {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)}
            frames.append(sse(self._chunk(model, [], usage=counts)))
        return [*frames, sse("[DONE]")]

    def stream_error(self, model: str, message: str) -> bytes:
        # OpenRouter's shape: an error chunk with finish_reason "error", after the answer began.
        choices = [{"index": 0, "delta": {"content": ""}, "finish_reason": "error"}]
        return sse(self._chunk(model, choices, error={"code": 502, "message": message}))

    def completion(self, model: str, body: dict, text: str, finish: str, usage: tuple[int, int] | None) -> dict:
        message = {"role": "assistant", "content": text}
        result = {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": self.finish[finish]}],
        }
        if usage:
            result["usage"] = {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)}
        return result

    def models(self) -> dict:
        return {
            "object": "list",
            "data": [
                {
                    "id": m["id"],
                    "object": "model",
                    "created": 0,
                    "owned_by": "fake-llm",
                    "name": m["name"],
                    "context_length": m["context_length"],
                    "pricing": {"prompt": m["prompt"], "completion": m["completion"]},
                    "supported_parameters": m["params"],
                    "top_provider": {"max_completion_tokens": m["max_output"]},
                }
                for m in MODELS
            ],
        }


class AnthropicWire:
    finish = {"stop": "end_turn", "length": "max_tokens"}
    error_types = {429: "rate_limit_error", 529: "overloaded_error", 401: "authentication_error"}

    def model(self, body: dict, path: str) -> str:
        return str(body.get("model", ""))

    def streaming(self, body: dict, query: dict) -> bool:
        return bool(body.get("stream"))

    def max_tokens(self, body: dict) -> int | None:
        return body.get("max_tokens")

    def input_tokens(self, body: dict) -> int:
        return content_tokens(body.get("system", "")) + sum(
            content_tokens(m.get("content", "")) for m in body.get("messages") or []
        )

    def prompt(self, body: dict) -> str:
        return "\n".join(
            [
                content_text(body.get("system", "")),
                *(content_text(m.get("content", "")) for m in body.get("messages") or []),
            ]
        )

    def sets(self, body: dict, param: str) -> bool:
        return {"stop": "stop_sequences"}.get(param, param) in body

    def schema(self, body: dict) -> dict | None:
        if (body.get("tool_choice") or {}).get("type") != "tool":
            return None
        name = body["tool_choice"].get("name")
        return next((t.get("input_schema") for t in body.get("tools") or [] if t.get("name") == name), None)

    def schema_tool(self, body: dict) -> str | None:
        """The name of the tool a request forces (structured output through a tool), or None."""
        return body["tool_choice"].get("name") if self.schema(body) is not None else None

    def error(self, status: int, message: str, kind: str) -> dict:
        kind = self.error_types.get(status, "api_error" if status >= 500 else "invalid_request_error")
        return {"type": "error", "error": {"type": kind, "message": message}}

    def stream_head(self, model: str, input_tokens: int | None) -> list[bytes]:
        message = {
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "content": [],
            "model": model,
            "stop_reason": None,
            "stop_sequence": None,
        }
        if input_tokens is not None:
            message["usage"] = {"input_tokens": input_tokens, "output_tokens": 1}
        block = {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}
        return [
            sse({"type": "message_start", "message": message}, "message_start"),
            sse(block, "content_block_start"),
            sse({"type": "ping"}, "ping"),
        ]

    def stream_delta(self, model: str, text: str) -> bytes:
        delta = {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}
        return sse(delta, "content_block_delta")

    def stream_tail(self, model: str, body: dict, finish: str, usage: tuple[int, int] | None) -> list[bytes]:
        return self.tail(self.finish[finish], usage)

    @staticmethod
    def tail(stop_reason: str, usage: tuple[int, int] | None, *, index: int = 0) -> list[bytes]:
        """The stream's last frames: block `index` (the text's, or a tool call's) stops, then the message."""
        delta = {"type": "message_delta", "delta": {"stop_reason": stop_reason, "stop_sequence": None}}
        if usage:
            delta["usage"] = {"output_tokens": usage[1]}
        return [
            sse({"type": "content_block_stop", "index": index}, "content_block_stop"),
            sse(delta, "message_delta"),
            sse({"type": "message_stop"}, "message_stop"),
        ]

    def stream_error(self, model: str, message: str) -> bytes:
        return sse({"type": "error", "error": {"type": "overloaded_error", "message": message}}, "error")

    def completion(self, model: str, body: dict, text: str, finish: str, usage: tuple[int, int] | None) -> dict:
        if self.schema(body) is not None:
            try:
                value = json.loads(text)
            except ValueError:
                value = {"text": text}
            tool = {"type": "tool_use", "id": "toolu_fake", "name": body["tool_choice"]["name"], "input": value}
            content, stop_reason = [tool], "tool_use"
        else:
            content, stop_reason = [{"type": "text", "text": text}], self.finish[finish]
        result = {
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": content,
            "stop_reason": stop_reason,
            "stop_sequence": None,
        }
        if usage:
            result["usage"] = {"input_tokens": usage[0], "output_tokens": usage[1]}
        return result

    def models(self) -> dict:
        data = [
            {"type": "model", "id": m["id"], "display_name": m["name"], "created_at": "2025-01-01T00:00:00Z"}
            for m in MODELS
        ]
        return {"data": data, "has_more": False, "first_id": data[0]["id"], "last_id": data[-1]["id"]}


class GeminiWire:
    finish = {"stop": "STOP", "length": "MAX_TOKENS"}
    statuses = {429: "RESOURCE_EXHAUSTED", 500: "INTERNAL", 503: "UNAVAILABLE", 401: "UNAUTHENTICATED"}

    def model(self, body: dict, path: str) -> str:
        return path.rsplit("/models/", 1)[-1].rsplit(":", 1)[0]

    def streaming(self, body: dict, query: dict) -> bool:
        return query.get("alt") == "sse"

    def max_tokens(self, body: dict) -> int | None:
        return (body.get("generationConfig") or {}).get("maxOutputTokens")

    def input_tokens(self, body: dict) -> int:
        contents = [body.get("systemInstruction") or {}, *(body.get("contents") or [])]
        return content_tokens([part for c in contents for part in c.get("parts") or []])

    def prompt(self, body: dict) -> str:
        contents = [body.get("systemInstruction") or {}, *(body.get("contents") or [])]
        parts = [part for c in contents for part in c.get("parts") or []]
        return "\n".join("[image]" if is_image_part(part) else part_text(part) for part in parts)

    def sets(self, body: dict, param: str) -> bool:
        names = {
            "top_p": "topP",
            "top_k": "topK",
            "max_tokens": "maxOutputTokens",
            "stop": "stopSequences",
            "presence_penalty": "presencePenalty",
            "frequency_penalty": "frequencyPenalty",
        }
        return names.get(param, param) in (body.get("generationConfig") or {})

    def schema(self, body: dict) -> dict | None:
        config = body.get("generationConfig") or {}
        return config.get("responseJsonSchema") or config.get("responseSchema")

    def error(self, status: int, message: str, kind: str) -> dict:
        return {"error": {"code": status, "message": message, "status": self.statuses.get(status, "UNKNOWN")}}

    def _response(self, model: str, text: str, finish: str | None, usage: tuple[int, int] | None) -> dict:
        candidate: dict[str, Any] = {"content": {"parts": [{"text": text}], "role": "model"}, "index": 0}
        if finish:
            candidate["finishReason"] = self.finish[finish]
        response: dict[str, Any] = {"candidates": [candidate], "modelVersion": model}
        if usage:
            response["usageMetadata"] = {
                "promptTokenCount": usage[0],
                "candidatesTokenCount": usage[1],
                "totalTokenCount": sum(usage),
            }
        return response

    def stream_head(self, model: str, input_tokens: int | None) -> list[bytes]:
        return []

    def stream_delta(self, model: str, text: str) -> bytes:
        return sse(self._response(model, text, None, None), newline="\r\n")  # Gemini separates with CRLF

    def stream_tail(self, model: str, body: dict, finish: str, usage: tuple[int, int] | None) -> list[bytes]:
        return [sse(self._response(model, "", finish, usage), newline="\r\n")]

    def stream_error(self, model: str, message: str) -> bytes:
        return sse({"error": {"code": 500, "message": message, "status": "INTERNAL"}}, newline="\r\n")

    def completion(self, model: str, body: dict, text: str, finish: str, usage: tuple[int, int] | None) -> dict:
        return self._response(model, text, finish, usage)

    def models(self) -> dict:
        chat = [
            {
                "name": f"models/{m['id']}",
                "displayName": m["name"],
                "inputTokenLimit": m["context_length"],
                "outputTokenLimit": m["max_output"],
                "supportedGenerationMethods": ["generateContent", "countTokens"],
            }
            for m in MODELS
        ]
        embedding = {
            "name": "models/fake-embedding",
            "displayName": "Fake embedding",
            "supportedGenerationMethods": ["embedContent"],
        }
        return {"models": [*chat, embedding]}
