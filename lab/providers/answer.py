"""Run one answer to the end and measure it: text, status, timings, usage and cost.

The engine calls this once per variant, streamed (`stream_answer`) when someone may watch its tokens, else in
one request (`complete_answer`); adapters only translate wire formats (and retry before the first token). A
mid-stream error keeps the partial text and marks the answer failed.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from decimal import Decimal

from .base import Adapter, ChatRequest, Finish, ModelInfo, ProviderError, StreamError, TextDelta, ToolCallDelta, Usage
from .message_rules import estimate_input_tokens, estimate_tokens

OK, ERROR = "ok", "error"


@dataclass
class Answer:
    status: str  # "ok" or "error"; the engine adds "timeout" and "cancelled" around this call
    text: str = ""
    error: str = ""
    finish_reason: str = ""
    ttft_ms: int | None = None
    latency_ms: int | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    tokens_estimated: bool = False
    cost: float | None = None  # USD; None when the price is unknown (never a misleading 0)
    # The tool calls as they arrived, [{"id", "name", "arguments"}] (arguments the JSON text); checked when stored.
    tool_calls: list[dict] = field(default_factory=list)


def add_tool_delta(calls: list[dict], delta: ToolCallDelta) -> dict:
    """Fold one piece of a tool call into the answer's calls; the call it belongs to."""
    while len(calls) <= delta.index:
        calls.append({"id": "", "name": "", "arguments": ""})
    call = calls[delta.index]
    call["id"] = call["id"] or delta.id
    call["name"] = call["name"] or delta.name
    call["arguments"] += delta.arguments
    return call


def cost_of(model_info: ModelInfo | None, input_tokens: int | None, output_tokens: int | None) -> float | None:
    if model_info is None or input_tokens is None or output_tokens is None:
        return None
    if model_info.input_price_per_mtok is None or model_info.output_price_per_mtok is None:
        return None
    return (input_tokens * model_info.input_price_per_mtok + output_tokens * model_info.output_price_per_mtok) / 1e6


def stored_cost(cost: float | None) -> Decimal | None:
    """A cost as the cost columns keep it: USD to 8 decimal places; None (unknown) stays None."""
    return Decimal(f"{cost:.8f}") if cost is not None else None


async def stream_answer(
    adapter: Adapter,
    request: ChatRequest,
    *,
    model_info: ModelInfo | None = None,
    on_delta: Callable[[str], Awaitable[None]] | None = None,
    answer: Answer | None = None,
    on_tool_call: Callable[[int, dict], Awaitable[None]] | None = None,
) -> Answer:
    """Stream into `answer` (pass one in to keep the partial text if the caller cancels or times out)."""
    answer = answer or Answer(status=ERROR)
    started = time.monotonic()
    parts: list[str] = []
    usage: Usage | None = None
    stream = adapter.stream(request, model_info=model_info)
    try:
        async for event in stream:
            if isinstance(event, TextDelta):
                if answer.ttft_ms is None:
                    answer.ttft_ms = int((time.monotonic() - started) * 1000)
                parts.append(event.text)
                answer.text = "".join(parts)
                if on_delta is not None:
                    await on_delta(event.text)
            elif isinstance(event, ToolCallDelta):
                if answer.ttft_ms is None:
                    answer.ttft_ms = int((time.monotonic() - started) * 1000)
                call = add_tool_delta(answer.tool_calls, event)
                if on_tool_call is not None:
                    await on_tool_call(event.index, dict(call))
            elif isinstance(event, Usage):
                usage = event
            elif isinstance(event, Finish):
                answer.finish_reason = event.reason
                answer.status = OK
            elif isinstance(event, StreamError):
                answer.status = ERROR
                answer.error = event.message
                break
    except ProviderError as exc:
        answer.status, answer.error = ERROR, str(exc)
    finally:
        await stream.aclose()  # closing aborts the HTTP request at once (cancel, timeout, error)
        answer.latency_ms = int((time.monotonic() - started) * 1000)
        _account(answer, request, usage, model_info)
    if answer.status == OK and not answer.finish_reason:
        answer.finish_reason = "stop"
    return answer


async def complete_answer(
    adapter: Adapter, request: ChatRequest, *, model_info: ModelInfo | None = None, answer: Answer | None = None
) -> Answer:
    """One non-streamed request into `answer`: what `stream_answer` records, from one JSON body.

    The whole text arrives at once, so its first token arrives with it: `ttft_ms` is the time to the complete
    answer, equal to `latency_ms` (nothing earlier can be measured). A request that fails keeps no text (the
    provider sent none); a cut-off answer keeps its finish reason (`length`), as when streamed."""
    answer = answer or Answer(status=ERROR)
    started = time.monotonic()
    usage: Usage | None = None
    try:
        completion = await adapter.complete(request, model_info=model_info)
    except ProviderError as exc:
        answer.status, answer.error = ERROR, str(exc)
    else:
        answer.text, usage = completion.text, completion.usage
        answer.tool_calls = list(completion.tool_calls)
        answer.status, answer.finish_reason = OK, completion.finish_reason or "stop"
    finally:
        answer.latency_ms = int((time.monotonic() - started) * 1000)
        _account(answer, request, usage, model_info)
    if answer.status == OK:
        answer.ttft_ms = answer.latency_ms
    return answer


def _account(answer: Answer, request: ChatRequest, usage: Usage | None, model_info: ModelInfo | None) -> None:
    if usage is not None and usage.input_tokens is not None and usage.output_tokens is not None:
        answer.input_tokens, answer.output_tokens = usage.input_tokens, usage.output_tokens
        answer.tokens_estimated = usage.estimated
    else:
        answer.input_tokens = estimate_input_tokens(request.messages)
        answer.output_tokens = estimate_tokens(answer.text)
        answer.tokens_estimated = True
    answer.cost = cost_of(model_info, answer.input_tokens, answer.output_tokens)
