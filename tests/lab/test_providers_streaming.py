"""Every HTTP adapter streams over real HTTP from the fake server: order, content, usage, cost, cancel."""

import asyncio

import httpx
import pytest

from lab.providers.answer import Answer, stream_answer
from lab.providers.base import Finish, ModelInfo, StreamError, TextDelta, Usage
from tests.lab.adapters import HTTP_KINDS, INPUT_TOKENS, adapter_for, chat, events_of

pytestmark = pytest.mark.parametrize("kind", HTTP_KINDS)


async def test_it_streams_the_answer_in_order_then_usage_then_finish(fake_llm, kind):
    events = await events_of(adapter_for(fake_llm, kind), chat(fake_llm.model(tokens=4)))

    assert events == [
        TextDelta("t0"),
        TextDelta(" t1"),
        TextDelta(" t2"),
        TextDelta(" t3"),
        Usage(input_tokens=INPUT_TOKENS, output_tokens=4),
        Finish("stop"),
    ]


async def test_an_answer_cut_by_max_tokens_finishes_with_length(fake_llm, kind):
    events = await events_of(adapter_for(fake_llm, kind), chat(fake_llm.model(tokens=10), max_tokens=3))

    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "t0 t1 t2"
    assert events[-1] == Finish("length")


async def test_an_answer_records_time_to_first_token_latency_usage_and_cost(fake_llm, kind):
    priced = ModelInfo(id="fake", input_price_per_mtok=1.0, output_price_per_mtok=2.0)
    request = chat(fake_llm.model(tokens=4, ttft_ms=60, token_ms=10))

    answer = await stream_answer(adapter_for(fake_llm, kind), request, model_info=priced)

    assert (answer.status, answer.text, answer.finish_reason) == ("ok", "t0 t1 t2 t3", "stop")
    assert answer.ttft_ms >= 60
    assert answer.latency_ms >= answer.ttft_ms + 25
    assert (answer.input_tokens, answer.output_tokens, answer.tokens_estimated) == (INPUT_TOKENS, 4, False)
    assert answer.cost == pytest.approx((INPUT_TOKENS * 1.0 + 4 * 2.0) / 1e6)


async def test_without_provider_usage_tokens_are_estimated_and_marked_so(fake_llm, kind):
    answer = await stream_answer(adapter_for(fake_llm, kind), chat(fake_llm.model(tokens=8, usage=0)))

    assert answer.status == "ok"
    assert answer.tokens_estimated is True
    assert answer.output_tokens > 0
    assert answer.cost is None  # no catalog price: unknown, never 0


async def test_closing_the_stream_stops_the_request_at_once(fake_llm, kind):
    model = fake_llm.model(tokens=200, token_ms=10)
    stream = adapter_for(fake_llm, kind).stream(chat(model))
    received = [await anext(stream), await anext(stream)]

    await stream.aclose()

    assert received == [TextDelta("t0"), TextDelta(" t1")]
    counters = fake_llm.wait_for(model, lambda c: c["disconnected"] == 1)
    assert (counters["disconnected"], counters["completed"], counters["in_flight"]) == (1, 0, 0)


async def test_cancelling_a_running_answer_disconnects_and_keeps_the_partial_text(fake_llm, kind):
    model = fake_llm.model(tokens=200, token_ms=10)
    answer, started = Answer(status="running"), asyncio.Event()

    async def on_delta(text: str) -> None:
        if len(answer.text) >= len("t0 t1"):
            started.set()

    task = asyncio.create_task(
        stream_answer(adapter_for(fake_llm, kind), chat(model), answer=answer, on_delta=on_delta)
    )
    await asyncio.wait_for(started.wait(), 5)

    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    assert answer.text.startswith("t0 t1")
    assert fake_llm.wait_for(model, lambda c: c["disconnected"] == 1)["disconnected"] == 1


async def test_a_shared_client_is_used_and_left_open(fake_llm, kind):
    async with httpx.AsyncClient() as client:
        first = await events_of(adapter_for(fake_llm, kind, client=client), chat(fake_llm.model(tokens=2)))
        second = await events_of(adapter_for(fake_llm, kind, client=client), chat(fake_llm.model(tokens=2)))

        assert not client.is_closed
    assert first[-1] == second[-1] == Finish("stop")
    assert not any(isinstance(e, StreamError) for e in first + second)
