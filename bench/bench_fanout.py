"""Fan-out benchmark: how close a round comes to its ideal wall time, and what the connection limiter costs.

Runs the real engine (`lab.engine.fanout.fan_out`) against the fake LLM server, started as its own process on
a free port, and prints each figure as a ratio against an ideal measured in the same run:

- interactive: N variants at once versus one answer's latency plus the stagger (the slowest start);
- batch: many calls through a connection limit versus ceil(calls / limit) × one answer's latency;
- limiter: the cost of one slot (acquire + release) with no limiter, the in-process one and the Redis one;
- streaming (with --redis): many rounds at once, each token timed from the moment the engine reads it from the
  provider's stream to the moment a listener on the group's channel (the Redis channel layer, as a socket
  consumer would be) receives the delta that carries it. The delta coalescing (~50 ms) is part of it.

    python bench/bench_fanout.py [--variants 5] [--repeats 15] [--redis redis://127.0.0.1:6379/0]

Not a test: nothing here asserts; the numbers are for docs/benchmarks.md and for spotting regressions.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import math
import os
import platform
import statistics
import sys
import time
import uuid
from contextlib import asynccontextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "promptlab.settings")

import redis.asyncio as aioredis  # noqa: E402
from support import start_fake_server  # noqa: E402

from lab.engine.deltas import Delta  # noqa: E402
from lab.engine.fanout import Call, Result, fan_out  # noqa: E402
from lab.engine.limiter import Limit, Limiter, LocalLimiter, RedisLimiter  # noqa: E402
from lab.events import OUTPUT_DELTAS, output_delta, output_deltas  # noqa: E402
from lab.providers.base import ChatRequest, ConnectionConfig, TextDelta  # noqa: E402
from lab.providers.openai import OpenAICompatibleAdapter  # noqa: E402
from lab.providers.registry import register  # noqa: E402

# When each token was read from a provider stream: model (unique per call) → [(text length so far, time)].
TOKEN_TIMES: dict[str, list[tuple[int, float]]] = {}


class StampingAdapter(OpenAICompatibleAdapter):
    """The OpenAI-compatible adapter, noting the moment each token is read."""

    async def stream(self, request, *, model_info=None):
        length, times = 0, TOKEN_TIMES.setdefault(request.model, [])
        async for event in super().stream(request, model_info=model_info):
            if isinstance(event, TextDelta):
                length += len(event.text)
                times.append((length, time.perf_counter()))
            yield event


register("bench_stamped", StampingAdapter)


class NoLimiter(Limiter):
    """Grants every slot at once: the baseline the real limiters are measured against."""

    async def _enter(
        self, limit: Limit, token: str, lane: str, tokens: int, *, ask: bool
    ) -> tuple[float | None, int, tuple[float, ...]]:
        return (None if ask else 0.0), 0, (time.monotonic(),)

    async def _try_acquire(self, limit: Limit, token: str, tokens: int, lane: str) -> tuple[float | None, int]:
        return None, 0

    async def _leave(self, limit: Limit, token: str) -> int:
        return 0

    async def _attempt(self, limit: Limit, member: str) -> float | None:
        return None

    async def _rate_limited(self, limit: Limit, delay_s: float) -> None:
        return None

    async def _used(self, limit: Limit, token: str, estimated: int, actual: int) -> None:
        return None

    async def _renew(self, key: str, tokens: list[str], *, waiting: bool) -> None:
        return None

    async def _release(self, limit: Limit, token: str, successes: int) -> None:
        return None

    async def in_flight(self, limit: Limit) -> int:
        return 0

    async def flushed(self) -> None:
        return None


class QuietHooks:
    """Stores and sends nothing: the engine's own cost without the database or the channel layer."""

    async def deltas(self, batch: list[Delta]) -> None:
        return None

    async def done(self, result: Result) -> None:
        return None

    async def cancelled(self) -> bool:
        return False

    async def waiting(self, key: int, connection: str, ahead: int) -> None:
        return None

    async def sending(self, key: int) -> None:
        return None


class ChannelHooks(QuietHooks):
    """Sends deltas through the real broadcast helper, exactly as a round does."""

    def __init__(self, channel_group: str) -> None:
        self.channel_group = channel_group

    async def deltas(self, batch: list[Delta]) -> None:
        from lab.realtime import abroadcast

        deltas = [output_delta(output=d.key, offset=d.offset, text=d.text) for d in batch]
        await abroadcast(self.channel_group, OUTPUT_DELTAS, **output_deltas(deltas=deltas))


def calls(base_url: str, count: int, *, model: str, stagger_ms: int, max_concurrency: int) -> list[Call]:
    config = ConnectionConfig(
        name="bench",
        kind="openai_compatible",
        base_url=base_url,
        max_concurrency=max_concurrency,
        rpm=1_000_000,
        connection_id=None,
    )
    request = ChatRequest(model=model, messages=[{"role": "user", "content": "Benchmark."}])
    return [
        Call(key=i, config=config, request=request, start_after_s=i * stagger_ms / 1000, timeout_s=60)
        for i in range(count)
    ]


async def timed_round(batch: list[Call], limiter: Limiter) -> float:
    started = time.perf_counter()
    results = await fan_out(batch, QuietHooks(), limiter=limiter)
    elapsed = time.perf_counter() - started
    failed = [r.answer.error for r in results if r.answer.status != "ok"]
    if failed:
        raise SystemExit(f"A benchmark call failed: {failed[0]}")
    return elapsed


@asynccontextmanager
async def limiter_of(kind: str, redis_url: str):
    if kind == "redis":
        limiter = RedisLimiter(aioredis.Redis.from_url(redis_url))
        try:
            yield limiter
        finally:
            await limiter.aclose()  # its releases are sent without waiting: they go before the client closes
    else:
        yield NoLimiter() if kind == "none" else LocalLimiter()


def with_key(batch: list[Call]) -> list[Call]:
    """A fresh limiter key per run, so runs never share slots or request counts."""
    config = ConnectionConfig(**{**batch[0].config.__dict__, "name": f"bench-{uuid.uuid4().hex[:8]}"})
    return [Call(**{**call.__dict__, "config": config}) for call in batch]


async def repeat(batch: list[Call], limiter: Limiter, times: int) -> list[float]:
    return [await timed_round(with_key(batch), limiter) for _ in range(times)]


async def slot_cost_us(limiter: Limiter, rounds: int = 2000) -> float:
    limit = Limit(key=f"bench-{uuid.uuid4().hex}", max_concurrency=4, rpm=1_000_000)
    started = time.perf_counter()
    for _ in range(rounds):
        async with limiter.slot(limit):
            pass
    return (time.perf_counter() - started) / rounds * 1e6


async def streaming_latencies(base_url: str, rounds: int, variants: int, model: str) -> tuple[list[float], int]:
    """Token → listener latency for `rounds` rounds streaming at once, each on its own channel group."""
    from channels.layers import get_channel_layer

    layer = get_channel_layer()
    models: dict[tuple[int, int], str] = {}
    received: list[list[tuple[int, int, int, float]]] = [[] for _ in range(rounds)]
    listeners, runs = [], []
    for number in range(rounds):
        group = f"bench-{uuid.uuid4().hex[:12]}"
        channel = await layer.new_channel()
        await layer.group_add(group, channel)
        batch = []
        for key in range(variants):
            models[(number, key)] = f"{model}&id={uuid.uuid4().hex[:10]}"
            config = ConnectionConfig(name=group, kind="bench_stamped", base_url=base_url, max_concurrency=variants)
            request = ChatRequest(model=models[(number, key)], messages=[{"role": "user", "content": "Benchmark."}])
            batch.append(Call(key=key, config=config, request=request, start_after_s=key * 0.05, timeout_s=60))
        listeners.append(asyncio.create_task(_listen(layer, channel, received[number])))
        runs.append(fan_out(batch, ChannelHooks(group), limiter=NoLimiter()))
    lengths = {
        (number, r.key): len(r.answer.text)
        for number, results in enumerate(await asyncio.gather(*runs))
        for r in results
    }
    deadline = time.perf_counter() + 60
    while time.perf_counter() < deadline:  # until every answer's last delta has arrived
        ends = {(number, key): end for number, deltas in enumerate(received) for key, _, end, _ in deltas}
        if all(ends.get(stream) == length for stream, length in lengths.items()):
            break
        await asyncio.sleep(0.1)
    for listener in listeners:
        listener.cancel()
    latencies = []
    for number, deltas in enumerate(received):
        for key, start, end, arrived in deltas:
            token_times = TOKEN_TIMES[models[(number, key)]]
            latencies += [arrived - read for length, read in token_times if start < length <= end]
    return latencies, sum(map(len, received))


async def _listen(layer, channel: str, received: list[tuple[int, int, int, float]]) -> None:
    """Note (output, start offset, end offset, arrival) for each answer's delta until cancelled."""
    while True:
        batch = (await layer.receive(channel))["event"]["deltas"]
        arrived = time.perf_counter()
        received += [(d["output"], d["offset"], d["offset"] + len(d["text"]), arrived) for d in batch]


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(share * len(ordered)) - 1)]


async def main(args: argparse.Namespace) -> None:
    logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per request would drown the figures
    server, fake_root = start_fake_server()
    base_url = f"{fake_root}/v1"
    model = f"fake?ttft_ms={args.ttft_ms}&tokens={args.tokens}&token_ms={args.token_ms}"
    kinds = ["none", "local"] + (["redis"] if args.redis else [])
    try:
        print(
            f"# Fan-out benchmark — {platform.node()}, {platform.processor() or platform.machine()}, "
            f"{os.cpu_count()} CPUs, Python {platform.python_version()}"
        )
        print(f"model: {model}  (one answer ≈ {args.ttft_ms + args.tokens * args.token_ms} ms by design)\n")
        async with limiter_of("none", args.redis) as limiter:
            await repeat(calls(base_url, 1, model=model, stagger_ms=0, max_concurrency=1), limiter, 2)  # warm up
            single = await repeat(
                calls(base_url, 1, model=model, stagger_ms=0, max_concurrency=1), limiter, args.repeats
            )
        one = statistics.median(single)
        print(f"one answer alone: p50 {one * 1000:.0f} ms, p95 {percentile(single, 0.95) * 1000:.0f} ms\n")

        ideal = one + (args.variants - 1) * args.stagger_ms / 1000
        print(f"interactive: {args.variants} variants, stagger {args.stagger_ms} ms; ideal {ideal * 1000:.0f} ms")
        print("limiter   p50 ms   p95 ms   p50/ideal   p50 - ideal")
        for kind in kinds:
            async with limiter_of(kind, args.redis) as limiter:
                batch = calls(base_url, args.variants, model=model, stagger_ms=args.stagger_ms, max_concurrency=16)
                walls = await repeat(batch, limiter, args.repeats)
            p50, p95 = statistics.median(walls), percentile(walls, 0.95)
            print(f"{kind:8} {p50 * 1000:8.0f} {p95 * 1000:8.0f} {p50 / ideal:11.2f} {(p50 - ideal) * 1000:10.0f} ms")

        waves = math.ceil(args.batch_calls / args.batch_limit)
        batch_ideal = waves * one
        # One full wave with no limiter: what `limit` answers at once cost on this machine (server and client
        # share its CPUs), so the limiter's own share can be told apart from the machine's.
        async with limiter_of("none", args.redis) as limiter:
            wave = calls(base_url, args.batch_limit, model=model, stagger_ms=0, max_concurrency=args.batch_limit)
            one_wave = statistics.median(await repeat(wave, limiter, 3))
        print(
            f"\nbatch: {args.batch_calls} calls through a limit of {args.batch_limit}; "
            f"ideal ceil(calls/limit) × one answer = {batch_ideal * 1000:.0f} ms; "
            f"{args.batch_limit} at once with no limiter take {one_wave * 1000:.0f} ms"
        )
        print("limiter   wall ms   wall/ideal   wall/(waves × one wave)")
        for kind in kinds[1:]:
            async with limiter_of(kind, args.redis) as limiter:
                batch = calls(base_url, args.batch_calls, model=model, stagger_ms=0, max_concurrency=args.batch_limit)
                wall = statistics.median(await repeat(batch, limiter, 3))
            print(f"{kind:8} {wall * 1000:9.0f} {wall / batch_ideal:12.2f} {wall / (waves * one_wave):25.2f}")

        print("\nlimiter cost of one slot (acquire + release, uncontended)")
        for kind in kinds:
            async with limiter_of(kind, args.redis) as limiter:
                print(f"{kind:8} {await slot_cost_us(limiter):8.0f} µs")

        if args.redis and args.streaming_rounds:
            stream_model = "fake?ttft_ms=100&tokens=100&token_ms=20"
            latencies, events = await streaming_latencies(base_url, args.streaming_rounds, 3, stream_model)
            print(
                f"\nstreaming: {args.streaming_rounds} rounds × 3 variants at once ({stream_model}), "
                f"{len(latencies)} token reads in {events} answer deltas through the Redis channel layer"
            )
            print(
                f"token → listener: p50 {statistics.median(latencies) * 1000:.0f} ms, "
                f"p95 {percentile(latencies, 0.95) * 1000:.0f} ms, max {max(latencies) * 1000:.0f} ms"
            )
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--variants", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--stagger-ms", type=int, default=50)
    parser.add_argument("--ttft-ms", type=int, default=300)
    parser.add_argument("--tokens", type=int, default=60)
    parser.add_argument("--token-ms", type=int, default=10)
    parser.add_argument("--batch-calls", type=int, default=100)
    parser.add_argument("--batch-limit", type=int, default=20)
    parser.add_argument("--streaming-rounds", type=int, default=20)
    parser.add_argument("--redis", default=os.environ.get("REDIS_URL", ""), help="Redis for the limiter and channels")
    arguments = parser.parse_args()
    # The channel layer comes from settings, which read REDIS_URL when first used.
    os.environ["REDIS_URL"] = arguments.redis
    asyncio.run(main(arguments))
