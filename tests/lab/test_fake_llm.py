"""The fake LLM server itself: scenarios chosen per request, counters, faults, and its command line."""

import asyncio
import re
import subprocess
import sys
import time

import httpx
import pytest

from lab.fake_llm.server import ServerThread
from lab.providers.base import Finish, TextDelta
from tests.fixtures.processes import free_port
from tests.lab.adapters import adapter_for, chat, events_of


async def test_it_records_the_most_requests_in_flight_at_once(fake_llm):
    model = fake_llm.model(tokens=3, ttft_ms=150)
    adapter = adapter_for(fake_llm, "openai_compatible")

    results = await asyncio.gather(*(events_of(adapter, chat(model)) for _ in range(4)))

    assert all(events[-1] == Finish("stop") for events in results)
    counters = fake_llm.scenario(model)
    assert (counters["requests"], counters["completed"], counters["max_in_flight"], counters["in_flight"]) == (
        4,
        4,
        4,
        0,
    )
    assert fake_llm.stats()["max_in_flight"] >= 4


def test_scenarios_of_different_tests_never_share_counters(fake_llm):
    first, second = fake_llm.model(tokens=1), fake_llm.model(tokens=1)
    payload = {"messages": [{"role": "user", "content": "hi"}]}

    httpx.post(f"{fake_llm.openai_url}/chat/completions", json={**payload, "model": first})

    assert fake_llm.scenario(first)["requests"] == 1
    assert fake_llm.scenario(second)["requests"] == 0


async def test_options_in_the_base_url_apply_to_every_request_and_the_model_name_wins(fake_llm):
    adapter = adapter_for(fake_llm, "openai_compatible", base_url=fake_llm.url(tokens=2))

    by_url = await events_of(adapter, chat("fake"))
    by_model = await events_of(adapter, chat("fake?tokens=3"))

    assert [e.text for e in by_url if isinstance(e, TextDelta)] == ["t0", " t1"]
    assert [e.text for e in by_model if isinstance(e, TextDelta)] == ["t0", " t1", " t2"]


async def test_stamped_tokens_carry_the_time_each_was_sent(fake_llm):
    adapter = adapter_for(fake_llm, "openai_compatible")
    before = time.time_ns() // 1000

    events = await events_of(adapter, chat(fake_llm.model(tokens=3, token_ms=30, stamp=1)))

    texts = [e.text for e in events if isinstance(e, TextDelta)]
    assert [text.startswith(" s" if i else "s") for i, text in enumerate(texts)] == [True] * 3
    sent = [int(text.strip()[1:]) for text in texts]
    assert before <= sent[0] <= time.time_ns() // 1000
    assert sent[1] - sent[0] >= 25_000 and sent[2] - sent[1] >= 25_000  # paced 30 ms apart, in microseconds


def test_a_stall_holds_the_request_until_the_client_gives_up(fake_llm):
    model = fake_llm.model(fault="stall", fault_at=0)
    body = {"model": model, "stream": True, "messages": [{"role": "user", "content": "hi"}]}

    url = f"{fake_llm.openai_url}/chat/completions"
    with pytest.raises(httpx.ReadTimeout), httpx.stream("POST", url, json=body, timeout=0.2) as response:
        for _ in response.iter_lines():
            pass

    counters = fake_llm.wait_for(model, lambda c: c["disconnected"] == 1)
    assert (counters["faults"], counters["disconnected"], counters["completed"]) == (1, 1, 0)


def test_openai_streams_start_with_an_sse_comment_like_openrouters(fake_llm):
    body = {"model": fake_llm.model(tokens=1), "stream": True, "messages": [{"role": "user", "content": "hi"}]}

    response = httpx.post(f"{fake_llm.openai_url}/chat/completions", json=body)

    assert response.headers["content-type"] == "text/event-stream"
    assert response.text.startswith(": FAKE PROCESSING\n\n")
    assert response.text.endswith("data: [DONE]\n\n")
    assert '"usage"' not in response.text  # only sent when stream_options.include_usage asks for it


@pytest.mark.parametrize(
    ("model", "message"),
    [("fake?tokenz=3", "Unknown fake-server option 'tokenz'"), ("fake?fault=gremlins", "Unknown fault 'gremlins'")],
)
def test_a_mistyped_scenario_is_a_readable_400(fake_llm, model, message):
    response = httpx.post(f"{fake_llm.openai_url}/chat/completions", json={"model": model, "messages": []})

    assert response.status_code == 400
    assert message in response.json()["error"]["message"]


@pytest.mark.parametrize(("path", "error_type"), [("/v1/messages", "overloaded_error"), ("/v1/chat/completions", None)])
def test_it_sends_a_real_529_overloaded(fake_llm, path, error_type):
    body = {"model": fake_llm.model(fault="529"), "messages": [{"role": "user", "content": "hi"}]}

    response = httpx.post(f"{fake_llm.base_url}{path}", json=body)

    assert (response.status_code, response.reason_phrase) == (529, "Overloaded")
    if error_type:
        assert response.json()["error"]["type"] == error_type


def test_reset_clears_the_counters(fake_llm):
    model = fake_llm.model(tokens=1)
    httpx.post(f"{fake_llm.openai_url}/chat/completions", json={"model": model, "messages": []})

    fake_llm.reset()

    assert fake_llm.scenario(model)["requests"] == 0
    assert fake_llm.stats()["requests"] == 0


def test_it_runs_from_the_command_line():
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "lab.fake_llm", "--port", str(port)], stdout=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                response = httpx.get(f"http://127.0.0.1:{port}/v1/models")
                break
            except httpx.ConnectError:
                assert time.monotonic() < deadline, "the fake server did not start"
                time.sleep(0.05)
        assert [m["id"] for m in response.json()["data"]] == ["fake", "fake-reasoning", "fake-free"]
    finally:
        server.terminate()
        server.wait(5)
        server.stdout.close()


def test_a_late_token_does_not_delay_the_tokens_after_it():
    """Each token is due at a time fixed from the start (first token + index × token_ms): when the server's loop is
    held up, the tokens after it catch up, so an answer takes as long as its schedule however busy the server is.
    A pause after each token instead added up the lateness: here three holds of 50 ms would make it 150 ms longer."""
    server = ServerThread().start()
    model = "fake?tokens=30&token_ms=10&ttft_ms=20&stamp=1&id=late-tokens"
    body = {"model": model, "stream": True, "messages": [{"role": "user", "content": "Hi."}]}
    stamps = []
    try:
        url = f"{server.base_url}/v1/chat/completions"
        with httpx.Client(timeout=10) as client, client.stream("POST", url, json=body) as response:
            for line in response.iter_lines():
                stamps += [int(found) for found in re.findall(r"s(\d{13,})", line)]
                if len(stamps) in (5, 12, 20):  # hold the server's loop up, as a busy server would be
                    server._loop.call_soon_threadsafe(time.sleep, 0.05)
    finally:
        server.stop()
    assert len(stamps) == 30
    assert (stamps[-1] - stamps[0]) / 1000 < 29 * 10 + 100  # ms: on schedule, give or take a loaded machine


def test_a_connection_serves_one_request_after_another_as_a_providers_does():
    """Kept open once a response is complete (a client pays for connections as it would against a provider), closed
    when the request asks it or when a fault cuts the response."""
    server = ServerThread().start()
    answer, dropped = "fake?tokens=3&id=kept", "fake?tokens=6&fault=drop&fault_at=2&id=cut"
    body = {"messages": [{"role": "user", "content": "Hi."}]}
    url = f"{server.base_url}/v1/chat/completions"
    try:
        with httpx.Client(timeout=10) as client:
            replies = [client.post(url, json={**body, "model": answer}) for _ in range(3)]
            streamed = [client.post(url, json={**body, "model": answer, "stream": True}) for _ in range(2)]
            kept = server.server.connections
            for _ in range(2):
                client.post(url, json={**body, "model": answer}, headers={"Connection": "close"})
            asked_to_close = server.server.connections - kept
            with pytest.raises(httpx.RemoteProtocolError):
                client.post(url, json={**body, "model": dropped, "stream": True})
            after_drop = client.post(url, json={**body, "model": answer})
    finally:
        server.stop()
    assert [reply.json()["choices"][0]["message"]["content"] for reply in replies] == ["t0 t1 t2"] * 3
    assert all("data: [DONE]" in reply.text for reply in streamed)
    assert [reply.headers["connection"] for reply in replies] == ["keep-alive"] * 3
    assert kept == 1  # five requests, plain and streamed, on one connection
    assert asked_to_close == 1  # the first "close" request still came on the open one; the second needed a new one
    assert after_drop.status_code == 200
    assert server.server.connections == kept + asked_to_close + 2  # the cut one's, then a fresh one after it


def test_a_marker_in_the_prompt_sets_the_answers_length_with_counters_of_its_own(fake_llm):
    model = fake_llm.model(tokens=3)

    def ask(content: str) -> httpx.Response:
        body = {"model": model, "messages": [{"role": "user", "content": content}]}
        return httpx.post(f"{fake_llm.openai_url}/chat/completions", json=body)

    plain, marked = ask("Row 1?"), ask("Row 2? [fake?tokens=6&ttft_ms=1]")
    refused = ask("Row 3? [fake?fault=500]")  # a marker may set the answer's timing only

    assert plain.json()["choices"][0]["message"]["content"] == "t0 t1 t2"
    assert marked.json()["choices"][0]["message"]["content"] == "t0 t1 t2 t3 t4 t5"
    assert marked.json()["model"] == "fake"
    assert fake_llm.scenario(model)["requests"] == 1
    assert fake_llm.scenario(f"{model}&tokens=6&ttft_ms=1")["requests"] == 1
    assert refused.status_code == 400 and "fault" in refused.json()["error"]["message"]
