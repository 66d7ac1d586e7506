"""The engine's HTTP transport spreads requests over small pools: connections are reused between waves of requests
(the fake server keeps them open, as providers do), no pool grows past its size, and every way a request ends —
read, streamed and closed early, refused — gives its place back."""

import asyncio
import concurrent.futures
import ssl

import httpx
import pytest

from lab.engine.http_shards import SHARD_SIZE, ShardedTransport
from lab.engine.runtime import HTTP_KEEPALIVE_S, HTTP_MAX_CONNECTIONS
from lab.providers.http import tls_context, tls_context_soon
from tests.lab.adapters import closed_port_url

BODY = {"messages": [{"role": "user", "content": "Hi."}]}


async def wave(client: httpx.AsyncClient, url: str, model: str, count: int) -> list[int]:
    replies = await asyncio.gather(*(client.post(url, json={**BODY, "model": model}) for _ in range(count)))
    return [reply.status_code for reply in replies]


def pool_sizes(transport: ShardedTransport) -> list[int]:
    return [len(shard.transport._pool.connections) for shard in transport.shards]


async def test_a_second_wave_of_200_calls_goes_at_once_on_the_connections_of_the_first(fake_llm):
    transport = ShardedTransport(max_connections=HTTP_MAX_CONNECTIONS, keepalive_expiry=HTTP_KEEPALIVE_S)
    # Long enough that all 200 of a wave are under way together.
    models = [fake_llm.model(tokens=2, ttft_ms=1000), fake_llm.model(tokens=2, ttft_ms=1000)]
    url = f"{fake_llm.openai_url}/chat/completions"
    opened = fake_llm.stats()["connections"]
    async with httpx.AsyncClient(transport=transport, timeout=30) as client:
        statuses = [await wave(client, url, model, 200) for model in models]
        sizes = pool_sizes(transport)
        actives = [shard.active for shard in transport.shards]
    assert statuses == [[200] * 200] * 2
    # One pool of 500 (the transport before this one) let the second wave have 20 to 25 requests in flight, at
    # six seconds of CPU: past max_keepalive_connections it had closed every connection that went idle, and it
    # handed each idle one left to many requests at once, all but one of which queued again (httpcore #1035).
    assert [fake_llm.scenario(model)["max_in_flight"] for model in models] == [200, 200]
    assert fake_llm.stats()["connections"] - opened == 200
    assert len(sizes) == -(-200 // SHARD_SIZE) and max(sizes) <= SHARD_SIZE
    assert actives == [0] * len(actives)


async def test_a_pool_is_freed_by_a_read_response_a_stream_closed_early_and_a_refused_connection(fake_llm):
    transport = ShardedTransport(max_connections=8, shard_size=2)
    long = fake_llm.model(tokens=200, token_ms=5)
    async with httpx.AsyncClient(transport=transport, timeout=10) as client:
        read = await client.post(f"{fake_llm.openai_url}/chat/completions", json={**BODY, "model": fake_llm.model()})
        stream = client.stream(
            "POST", f"{fake_llm.openai_url}/chat/completions", json={**BODY, "model": long, "stream": True}
        )
        async with stream as response:
            async for _ in response.aiter_lines():
                break  # the caller stops reading mid-answer
        with pytest.raises(httpx.ConnectError):
            await client.post(f"{closed_port_url()}/chat/completions", json={**BODY, "model": "fake"})
        actives = [shard.active for shard in transport.shards]
    assert read.status_code == 200
    assert actives == [0] * len(actives)


async def test_when_every_pool_is_full_a_request_waits_in_the_least_busy_one(fake_llm):
    transport = ShardedTransport(max_connections=4, shard_size=2)
    model = fake_llm.model(tokens=1, ttft_ms=200)
    async with httpx.AsyncClient(transport=transport, timeout=10) as client:
        statuses = await wave(client, f"{fake_llm.openai_url}/chat/completions", model, 7)
        shards = len(transport.shards)
    assert statuses == [200] * 7
    assert shards == 2  # no more pools than max_connections allow
    assert fake_llm.scenario(model)["max_in_flight"] == 4  # the others waited for a connection of their pool


def test_every_client_of_the_process_shares_one_tls_context_whichever_thread_builds_it():
    # The experiment command has it built on a thread of its own while its main thread reads the file; whoever asks
    # meanwhile waits for that one (a context is 25 ms of reading the CA bundle, a second one was built by the
    # model catalog's fetch before the first request).
    with concurrent.futures.ThreadPoolExecutor(8) as threads:
        tls_context_soon()
        contexts = list(threads.map(lambda _: tls_context(), range(8)))
    transport = ShardedTransport(max_connections=4)
    transport._pick()
    assert all(context is contexts[0] for context in contexts)
    assert isinstance(contexts[0], ssl.SSLContext) and contexts[0].verify_mode == ssl.CERT_REQUIRED
    assert transport.shards[0].transport._pool._ssl_context is contexts[0]
