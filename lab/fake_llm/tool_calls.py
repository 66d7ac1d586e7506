"""Tool calls and schema-constrained replies of the fake server, in the three wire formats.

A scenario `tool=<name>&args=<JSON text>` makes the model call that tool with those arguments (any text, so a test
can send arguments that are not JSON or do not validate); the arguments stream in three fragments (OpenAI
`tool_calls` deltas, Anthropic `input_json_delta`), or whole as Gemini sends a `functionCall`. When a request sends
a response schema, the reply is a minimal JSON instance of it (`wire.sample_for`), or with `json=invalid` a JSON
value that does not validate.
"""

from __future__ import annotations

import json
from typing import Any

from .wire import AnthropicWire, GeminiWire, OpenAIWire, sample_for, sse

INVALID_JSON_REPLY = '"not what the schema asks for"'


def schema_reply(schema: dict, invalid: bool) -> str:
    return INVALID_JSON_REPLY if invalid else json.dumps(sample_for(schema))


def fragments(arguments: str) -> list[str]:
    """The arguments in three pieces (some may be empty for a short text), as a model streams them."""
    third = max(len(arguments) // 3, 1)
    pieces = [arguments[:third], arguments[third : 2 * third], arguments[2 * third :]]
    return [piece for piece in pieces if piece]


def tool_call_frames(wire: Any, model: str, name: str, arguments: str, usage: tuple[int, int] | None) -> list[bytes]:
    """The whole streamed answer after the stream's head: one call of tool `name`, then the tail."""
    if isinstance(wire, OpenAIWire):
        return _openai(wire, model, name, arguments, usage)
    if isinstance(wire, AnthropicWire):
        return _anthropic(name, arguments, usage)
    return _gemini(wire, model, name, arguments, usage)


def _openai(wire: OpenAIWire, model: str, name: str, arguments: str, usage) -> list[bytes]:
    head = {"index": 0, "id": "call_fake0", "type": "function", "function": {"name": name, "arguments": ""}}
    frames = [sse(wire._chunk(model, [{"index": 0, "delta": {"tool_calls": [head]}, "finish_reason": None}]))]
    for piece in fragments(arguments):
        delta = {"tool_calls": [{"index": 0, "function": {"arguments": piece}}]}
        frames.append(sse(wire._chunk(model, [{"index": 0, "delta": delta, "finish_reason": None}])))
    frames.append(sse(wire._chunk(model, [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}])))
    if usage:
        counts = {"prompt_tokens": usage[0], "completion_tokens": usage[1], "total_tokens": sum(usage)}
        frames.append(sse(wire._chunk(model, [], usage=counts)))
    return [*frames, sse("[DONE]")]


def _anthropic(name: str, arguments: str, usage) -> list[bytes]:
    frames = [*_tool_head(name, "toolu_fake0"), *(json_tool_delta(piece) for piece in fragments(arguments))]
    return [*frames, *AnthropicWire.tail("tool_use", usage, index=1)]


def _gemini(wire: GeminiWire, model: str, name: str, arguments: str, usage) -> list[bytes]:
    # Gemini always sends an object; a test's non-JSON text goes inside one.
    response = wire._response(model, "", "stop", usage)
    response["candidates"][0]["content"]["parts"] = [{"functionCall": {"name": name, "args": _object(arguments)}}]
    return [sse(response, newline="\r\n")]


def json_tool_head(name: str) -> list[bytes]:
    """Anthropic's structured output streams as the forced tool's input: its block opens after the text block."""
    return _tool_head(name, "toolu_fake_json")


def _tool_head(name: str, call_id: str) -> list[bytes]:
    """Anthropic's `tool_use` block opening after the (empty) text block; its input follows as `json_tool_delta`s."""
    block = {"type": "tool_use", "id": call_id, "name": name, "input": {}}
    return [
        sse({"type": "content_block_stop", "index": 0}, "content_block_stop"),
        sse({"type": "content_block_start", "index": 1, "content_block": block}, "content_block_start"),
    ]


def json_tool_delta(text: str) -> bytes:
    delta = {"type": "content_block_delta", "index": 1, "delta": {"type": "input_json_delta", "partial_json": text}}
    return sse(delta, "content_block_delta")


def tool_call_completion(wire: Any, model: str, name: str, arguments: str, usage: tuple[int, int] | None) -> dict:
    """The same call answered in one JSON body (a request without streaming)."""
    if isinstance(wire, OpenAIWire):
        body = wire.completion(model, {}, "", "stop", usage)
        choice = body["choices"][0]
        call = {"id": "call_fake0", "type": "function", "function": {"name": name, "arguments": arguments}}
        choice["message"] = {"role": "assistant", "content": None, "tool_calls": [call]}
        choice["finish_reason"] = "tool_calls"
        return body
    if isinstance(wire, AnthropicWire):
        body = wire.completion(model, {}, "", "stop", usage)
        body["content"] = [{"type": "tool_use", "id": "toolu_fake0", "name": name, "input": _object(arguments)}]
        body["stop_reason"] = "tool_use"
        return body
    body = wire.completion(model, {}, "", "stop", usage)
    body["candidates"][0]["content"]["parts"] = [{"functionCall": {"name": name, "args": _object(arguments)}}]
    return body


def _object(arguments: str) -> Any:
    try:
        return json.loads(arguments)
    except ValueError:
        return {"unparsed": arguments}
