"""How many streams one httpx.AsyncClient keeps in flight at once, against the fake LLM server: the engine's one
client (lab.engine.runtime's limits) against the same limits split over several clients.

httpcore's pool assigns requests to connections in a loop over every request and connection (httpcore #1035),
so past some tens of connections a client may spend its time there rather than on the streams. Each stream here
waits `--ttft-ms` before its only tokens, so with no overhead all `--streams` are in flight together; the fake
server counts the most it saw at once. Also printed: this process's CPU seconds for the lot.

    python bench/bench_http_pool.py [--streams 200 500] [--shards 1 4]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import resource
import sys
import time
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from support import start_fake_server  # noqa: E402

from lab.engine.runtime import HTTP_LIMITS, HTTP_TIMEOUT  # noqa: E402


def cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


async def run(url: str, streams: int, shards: int, ttft_ms: int) -> tuple[int, float, float]:
    limits = httpx.Limits(
        max_connections=-(-HTTP_LIMITS.max_connections // shards),
        max_keepalive_connections=-(-HTTP_LIMITS.max_keepalive_connections // shards),
        keepalive_expiry=HTTP_LIMITS.keepalive_expiry,
    )
    clients = [httpx.AsyncClient(timeout=HTTP_TIMEOUT, limits=limits) for _ in range(shards)]
    body = {
        "model": f"fake?ttft_ms={ttft_ms}&tokens=2",
        "stream": True,
        "messages": [{"role": "user", "content": "hi"}],
    }

    async def one(index: int) -> None:
        async with clients[index % shards].stream("POST", f"{url}/v1/chat/completions", json=body) as response:
            async for _ in response.aiter_lines():
                pass

    await clients[0].post(f"{url}/_reset")
    started, cpu = time.perf_counter(), cpu_s()
    await asyncio.gather(*(one(index) for index in range(streams)))
    wall, cpu = time.perf_counter() - started, cpu_s() - cpu
    most = (await clients[0].get(f"{url}/_stats")).json()["max_in_flight"]
    for client in clients:
        await client.aclose()
    return most, wall, cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--streams", type=int, nargs="+", default=[200, 500])
    parser.add_argument("--shards", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--ttft-ms", type=int, default=3000)
    args = parser.parse_args()
    server, url = start_fake_server()
    try:
        print(f"load average {' '.join(Path('/proc/loadavg').read_text().split()[:3])}; {os.cpu_count()} CPUs")
        print("| streams | clients | most in flight | wall | ideal | CPU |")
        print("|---:|---:|---:|---:|---:|---:|")
        for streams in args.streams:
            for shards in args.shards:
                most, wall, cpu = asyncio.run(run(url, streams, shards, args.ttft_ms))
                print(f"| {streams} | {shards} | {most} | {wall:.2f} s | {args.ttft_ms / 1000:.2f} s | {cpu:.2f} s |")
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
