"""Every HTTP adapter answers in one request too (`complete_answer`, for batch calls nobody watches): the same
text, usage, cost and finish reason a stream gives, over real HTTP from the fake server."""

import sys

import pytest

from lab.providers.answer import complete_answer, stream_answer
from lab.providers.base import ModelInfo
from tests.lab.adapters import HTTP_KINDS, INPUT_TOKENS, adapter_for, chat

pytestmark = pytest.mark.parametrize("kind", HTTP_KINDS)


async def test_one_request_gives_the_streamed_answer_its_usage_cost_and_timings(fake_llm, kind):
    priced = ModelInfo(id="fake", input_price_per_mtok=1.0, output_price_per_mtok=2.0)
    model = fake_llm.model(tokens=4, ttft_ms=60, token_ms=10)

    answer = await complete_answer(adapter_for(fake_llm, kind), chat(model), model_info=priced)
    streamed = await stream_answer(adapter_for(fake_llm, kind), chat(model), model_info=priced)

    assert not fake_llm.scenario(model)["recent"][0].get("stream")
    assert (answer.status, answer.text, answer.finish_reason) == (streamed.status, streamed.text, "stop")
    assert (answer.input_tokens, answer.output_tokens, answer.tokens_estimated) == (INPUT_TOKENS, 4, False)
    assert answer.cost == pytest.approx(streamed.cost)
    # No token arrives before the whole answer: the first one's time is the answer's.
    assert answer.ttft_ms == answer.latency_ms >= 60 + 25


async def test_a_cut_off_answer_keeps_its_length_finish(fake_llm, kind):
    answer = await complete_answer(adapter_for(fake_llm, kind), chat(fake_llm.model(tokens=10), max_tokens=3))

    assert (answer.status, answer.text, answer.finish_reason) == ("ok", "t0 t1 t2", "length")


async def test_a_refused_request_is_an_error_without_text_or_first_token(fake_llm, kind):
    answer = await complete_answer(adapter_for(fake_llm, kind), chat(fake_llm.model(fault="400")))

    assert answer.status == "error" and "400" in answer.error
    assert answer.text == "" and answer.ttft_ms is None and answer.latency_ms is not None


class _Searches:
    """A meta path finder that only records what the import system looked for and did not find in sys.modules."""

    def __init__(self):
        self.names: list[str] = []

    def find_spec(self, name, path=None, target=None):
        self.names.append(name)
        return None  # the next finder goes on as usual


async def test_a_request_searches_for_no_module(fake_llm, kind):
    # httpcore asks for sniffio on every request and lock; while it was not installed, each of those failed
    # imports searched sys.path again (a fifth of a batch call's CPU). A warm request imports nothing.
    adapter = adapter_for(fake_llm, kind)
    model = fake_llm.model(tokens=2)
    await complete_answer(adapter, chat(model))
    searches = _Searches()
    sys.meta_path.insert(0, searches)
    try:
        await complete_answer(adapter, chat(model))
        await stream_answer(adapter, chat(model))
    finally:
        sys.meta_path.remove(searches)

    assert searches.names == []
