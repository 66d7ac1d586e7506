"""Every HTTP adapter meets the fake server's faults: what is retried, what is not, and what a user then sees."""

import time

import httpx
import pytest

from lab.providers.answer import stream_answer
from lab.providers.base import Finish, ProviderError, StreamError, TextDelta
from tests.lab.adapters import HTTP_KINDS, adapter_for, chat, closed_port_url, events_of

pytestmark = pytest.mark.parametrize("kind", HTTP_KINDS)


def texts(events) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


async def test_a_429_is_retried_after_the_advised_retry_after_ms(fake_llm, kind):
    model = fake_llm.model(tokens=3, fault="429", fail_times=1, retry_after_ms=200)
    started = time.monotonic()

    events = await events_of(adapter_for(fake_llm, kind), chat(model))

    assert time.monotonic() - started >= 0.2
    assert events[-1] == Finish("stop")
    assert fake_llm.scenario(model)["requests"] == 2


async def test_an_overloaded_provider_is_retried_until_the_answer_comes(fake_llm, kind):
    model = fake_llm.model(tokens=3, fault="529", fail_times=2)

    events = await events_of(adapter_for(fake_llm, kind), chat(model))

    assert texts(events) == "t0 t1 t2"
    counters = fake_llm.scenario(model)
    # Every request was answered (two 529s, then the answer): none was a dropped connection retried as such.
    assert (counters["requests"], counters["faults"], counters["completed"]) == (3, 2, 3)


@pytest.mark.parametrize("status", [500, 529], ids=["server-error", "overloaded"])
async def test_retries_stop_after_the_policy_with_a_readable_error(fake_llm, kind, status):
    model = fake_llm.model(fault=str(status))

    with pytest.raises(ProviderError) as failure:
        await events_of(adapter_for(fake_llm, kind), chat(model))

    assert failure.value.status == status
    assert f"{kind} answered HTTP {status}" in str(failure.value)
    assert "gave up after 2 retries" in str(failure.value)
    assert fake_llm.scenario(model)["requests"] == 3


async def test_a_spend_limit_429_is_not_retried(fake_llm, kind):
    model = fake_llm.model(fault="spend_limit")

    with pytest.raises(ProviderError) as failure:
        await events_of(adapter_for(fake_llm, kind), chat(model))

    assert "quota" in str(failure.value) and "not retried" in str(failure.value)
    assert fake_llm.scenario(model)["requests"] == 1


async def test_a_wait_longer_than_the_cap_fails_at_once_and_says_why(fake_llm, kind):
    model = fake_llm.model(fault="429", retry_after=3600)

    with pytest.raises(ProviderError, match="asks to wait 3600 s"):
        await events_of(adapter_for(fake_llm, kind), chat(model))

    assert fake_llm.scenario(model)["requests"] == 1


async def test_a_client_error_is_not_retried(fake_llm, kind):
    model = fake_llm.model(fault="400")

    with pytest.raises(ProviderError) as failure:
        await events_of(adapter_for(fake_llm, kind), chat(model))

    assert failure.value.status == 400
    assert fake_llm.scenario(model)["requests"] == 1


async def test_an_error_in_the_middle_of_the_stream_fails_the_answer_and_keeps_the_partial_text(fake_llm, kind):
    model = fake_llm.model(tokens=6, fault="mid_stream", fault_at=3)

    answer = await stream_answer(adapter_for(fake_llm, kind), chat(model))

    assert (answer.status, answer.text) == ("error", "t0 t1 t2")
    assert "error in the middle of the answer" in answer.error
    assert fake_llm.scenario(model)["requests"] == 1  # never retried once text was shown


async def test_a_dropped_connection_after_the_first_token_is_not_retried(fake_llm, kind):
    model = fake_llm.model(tokens=6, fault="drop", fault_at=2)

    events = await events_of(adapter_for(fake_llm, kind), chat(model))

    assert texts(events) == "t0 t1"
    assert isinstance(events[-1], StreamError)
    assert "connection" in events[-1].message and "broke" in events[-1].message
    assert fake_llm.scenario(model)["requests"] == 1


async def test_a_dropped_connection_before_the_first_token_is_retried(fake_llm, kind):
    model = fake_llm.model(tokens=3, fault="drop", fault_at=0, fail_times=1)

    events = await events_of(adapter_for(fake_llm, kind), chat(model))

    assert texts(events) == "t0 t1 t2"
    assert fake_llm.scenario(model)["requests"] == 2


async def test_a_stall_mid_stream_ends_in_a_read_timeout_with_the_partial_text(fake_llm, kind):
    model = fake_llm.model(tokens=6, fault="stall", fault_at=2)
    async with httpx.AsyncClient(timeout=httpx.Timeout(5.0, read=0.15)) as client:
        answer = await stream_answer(adapter_for(fake_llm, kind, client=client), chat(model))

    assert (answer.status, answer.text) == ("error", "t0 t1")
    assert "went silent" in answer.error
    assert fake_llm.wait_for(model, lambda c: c["disconnected"] == 1)["disconnected"] == 1


async def test_an_unreachable_server_is_retried_then_reported_readably(fake_llm, kind):
    adapter = adapter_for(fake_llm, kind, base_url=closed_port_url())

    with pytest.raises(ProviderError, match=f"Could not connect to {kind} \\(127.0.0.1:\\d+\\).*gave up after 2"):
        await events_of(adapter, chat("fake"))


async def test_an_unknown_fake_option_is_a_readable_400(fake_llm, kind):
    with pytest.raises(ProviderError, match="Unknown fake-server option 'tokenz'"):
        await events_of(adapter_for(fake_llm, kind), chat("fake?tokenz=3"))
