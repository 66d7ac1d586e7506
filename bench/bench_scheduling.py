"""Scheduling benchmark: an interactive call behind a backlog of batch calls, and the provider's busiest window.

Runs the real engine (`lab.engine.fanout.fan_out`) and connection scheduler against the fake LLM server (its own
process, on a free port). A backlog of batch calls is queued on connection X (rpm-limited, a steady share of 429s
retried); while it drains:

- an interactive call on connection Y: its wall time against its ideal (the same call alone, measured first);
- an interactive call on X: how long it waited for X, and how many batch calls that arrived before it were sent
  after it arrived (0 means it took X's next free slot ahead of the whole queue);
- the most requests the fake server saw in any window, retries included, against rpm.

    python bench/bench_scheduling.py [--backlog 200] [--rpm 100] [--window 60] [--runs 3] \\
        [--redis redis://127.0.0.1:6379/0]

With --runs 3 it repeats the whole measurement and prints the median of each figure: the interactive delay as a
ratio to its ideal, and the busiest window against rpm.

Not a test: nothing here asserts; the numbers are for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
import uuid
from pathlib import Path
from statistics import median

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "promptlab.settings")

import django  # noqa: E402

django.setup()

import httpx  # noqa: E402
import redis.asyncio as aioredis  # noqa: E402
from support import start_fake_server  # noqa: E402

from lab.engine.deltas import Delta  # noqa: E402
from lab.engine.fanout import Call, Result, fan_out  # noqa: E402
from lab.engine.limiter import BATCH, INTERACTIVE, LocalLimiter, RedisLimiter  # noqa: E402
from lab.providers.base import ChatRequest, ConnectionConfig  # noqa: E402


class Hooks:
    """Notes when each call's request was sent (its first delta or its result); stores nothing."""

    def __init__(self) -> None:
        self.sent: dict[int, float] = {}

    async def deltas(self, batch: list[Delta]) -> None:
        for delta in batch:
            self.sent.setdefault(delta.key, time.monotonic())

    async def done(self, result: Result) -> None:
        self.sent.setdefault(result.key, time.monotonic())

    async def cancelled(self) -> bool:
        return False

    async def waiting(self, key: int, connection: str, ahead: int) -> None:
        return None

    async def sending(self, key: int) -> None:
        return None


def call(key: int, config: ConnectionConfig, model: str, lane: str) -> Call:
    request = ChatRequest(model=model, messages=[{"role": "user", "content": "Say something."}])
    return Call(key=key, config=config, request=request, timeout_s=30, lane=lane, queue_deadline_s=3600)


def busiest(arrivals: list[float], window_s: float) -> int:
    arrivals = sorted(arrivals)
    return max((sum(1 for at in arrivals[i:] if at < start + window_s) for i, start in enumerate(arrivals)), default=0)


async def once(args: argparse.Namespace) -> dict:
    """One backlog, start to drained: the figures of one run."""
    server, base_url = start_fake_server()
    stats = httpx.Client(base_url=base_url)
    client = aioredis.Redis.from_url(args.redis) if args.redis else None
    limiter = RedisLimiter(client, window_s=args.window) if client else LocalLimiter(window_s=args.window)
    run = uuid.uuid4().hex[:8]
    x = ConnectionConfig(
        name=f"x-{run}", kind="openai_compatible", base_url=f"{base_url}/v1", max_concurrency=8, rpm=args.rpm
    )
    y = ConnectionConfig(name=f"y-{run}", kind="openai_compatible", base_url=f"{base_url}/v1", max_concurrency=8)
    answer = f"fake?tokens=20&token_ms=10&id={run}"
    batch_model = f"fake?tokens=20&token_ms=10&fault=429&fault_every=10&retry_after=0.5&id=b{run}"
    interactive_on_x = f"fake?tokens=20&token_ms=10&id=ix{run}"
    try:
        started = time.monotonic()
        await fan_out([call(0, y, answer, INTERACTIVE)], Hooks(), limiter=limiter)
        ideal_s = time.monotonic() - started

        hooks = Hooks()
        backlog = [call(n, x, batch_model, BATCH) for n in range(1, args.backlog + 1)]
        draining = asyncio.create_task(fan_out(backlog, hooks, limiter=limiter))
        await asyncio.sleep(args.window / 4)  # the queue is long by now
        started = time.monotonic()
        await fan_out([call(10_000, y, answer, INTERACTIVE)], Hooks(), limiter=limiter)
        other_s = time.monotonic() - started
        arrived = time.time()
        queued = sum(1 for key in range(1, args.backlog + 1) if key not in hooks.sent)
        await fan_out([call(20_000, x, interactive_on_x, INTERACTIVE)], Hooks(), limiter=limiter)
        results = await draining
        total_s = time.monotonic() - started
        scenarios = stats.get("/_stats").json()["scenarios"]
        arrivals = scenarios[batch_model]["arrivals"]
        sent_at = scenarios[interactive_on_x]["arrivals"][0]  # when the provider saw the interactive request
    finally:
        await limiter.aclose()
        stats.close()
        server.terminate()
    return {
        "ideal_s": ideal_s,
        "other_s": other_s,
        "ratio": other_s / ideal_s,
        "queued": queued,
        "waited_s": sent_at - arrived,
        "overtaken": sum(1 for at in arrivals if arrived < at < sent_at),
        "busiest": busiest(arrivals, args.window),
        "requests": len(arrivals),
        "faults": scenarios[batch_model]["faults"],
        "failed": sum(1 for r in results if r.answer.status != "ok"),
        "drained_s": total_s,
    }


async def main(args: argparse.Namespace) -> None:
    print(f"backlog: {args.backlog} batch calls on X (rpm {args.rpm}, window {args.window:g} s, every 10th a 429)")
    print(f"load average before: {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")
    runs = []
    for number in range(1, args.runs + 1):
        run = await once(args)
        runs.append(run)
        print(f"run {number}:")
        print(
            f"  interactive call on Y while X drains: {run['other_s'] * 1000:.0f} ms, "
            f"{run['ratio']:.2f}x its ideal ({run['ideal_s'] * 1000:.0f} ms alone)"
        )
        print(
            f"  interactive call on X: sent {run['waited_s']:.2f} s after it arrived, "
            f"{run['queued']} batch calls queued;"
        )
        print(f"    batch requests the provider saw in between: {run['overtaken']} (retries and calls already let in)")
        print(f"  busiest {args.window:g} s at the provider: {run['busiest']} requests against rpm {args.rpm}")
        print(
            f"    ({run['requests']} requests for {args.backlog} calls: {run['faults']} 429s retried; "
            f"{run['failed']} calls failed); the backlog drained in {run['drained_s']:.0f} s"
        )
    if len(runs) > 1:
        print(f"median of {len(runs)} runs:")
        print(f"  interactive delay on Y behind the backlog: {median(r['ratio'] for r in runs):.2f}x its ideal")
        print(f"  interactive call on X sent after {median(r['waited_s'] for r in runs):.2f} s")
        print(f"  busiest {args.window:g} s: {median(r['busiest'] for r in runs):g} requests against rpm {args.rpm}")
    print(f"load average after: {' '.join(Path('/proc/loadavg').read_text().split()[:3])}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backlog", type=int, default=200)
    parser.add_argument("--rpm", type=int, default=100)
    parser.add_argument("--window", type=float, default=60.0, help="the rpm window in seconds (60 as in production)")
    parser.add_argument("--redis", default=os.environ.get("REDIS_URL", ""), help="Redis for the limiter")
    parser.add_argument("--runs", type=int, default=1, help="run it this many times and print the medians too")
    asyncio.run(main(parser.parse_args()))
