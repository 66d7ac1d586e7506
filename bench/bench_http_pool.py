"""How many streams the engine's HTTP client keeps in flight at once against the fake LLM server (which keeps
connections open, as providers do): its transport (lab.engine.http_shards, pools of 16) against the one httpcore
pool it replaced (500 connections, 100 kept alive).

httpcore's pool walks every connection for each idle one on every request and response (httpcore #1035), closes
connections that go idle once it holds more than `max_keepalive_connections`, and hands an idle connection to
several queued requests of which all but one queue again. Each of `--waves` waves sends `--streams` streams at
once, each waiting `--ttft-ms` before its only tokens, so with no overhead all of a wave are in flight together;
the fake server counts the most it saw at once and the connections it accepted. Also printed: this process's CPU
seconds for the wave. The second wave is the one that reuses connections.

    python bench/bench_http_pool.py [--streams 200 500] [--waves 2] [--ttft-ms 3000]
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

from lab.engine.http_shards import ShardedTransport  # noqa: E402
from lab.engine.runtime import HTTP_KEEPALIVE_S, HTTP_MAX_CONNECTIONS, HTTP_TIMEOUT  # noqa: E402
from lab.providers.http import tls_context  # noqa: E402


def cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def transports() -> dict[str, httpx.AsyncBaseTransport]:
    return {
        "one pool (before)": httpx.AsyncHTTPTransport(
            verify=tls_context(),
            limits=httpx.Limits(
                max_connections=HTTP_MAX_CONNECTIONS, max_keepalive_connections=100, keepalive_expiry=HTTP_KEEPALIVE_S
            ),
        ),
        "pools of 16 (engine)": ShardedTransport(
            max_connections=HTTP_MAX_CONNECTIONS, keepalive_expiry=HTTP_KEEPALIVE_S
        ),
    }


async def run(url: str, transport: httpx.AsyncBaseTransport, streams: int, waves: int, ttft_ms: int):
    """(most in flight, connections opened, wall, CPU) per wave."""
    body = {
        "model": f"fake?ttft_ms={ttft_ms}&tokens=2",
        "stream": True,
        "messages": [{"role": "user", "content": "hi"}],
    }
    figures = []
    async with httpx.AsyncClient(timeout=HTTP_TIMEOUT, transport=transport) as client, httpx.AsyncClient() as admin:

        async def one() -> None:
            async with client.stream("POST", f"{url}/v1/chat/completions", json=body) as response:
                async for _ in response.aiter_lines():
                    pass

        for _ in range(waves):
            await admin.post(f"{url}/_reset")
            started, cpu = time.perf_counter(), cpu_s()
            await asyncio.gather(*(one() for _ in range(streams)))
            wall, cpu = time.perf_counter() - started, cpu_s() - cpu
            stats = (await admin.get(f"{url}/_stats")).json()
            # `admin` reuses the connection it had before the reset: every one counted is the client's.
            figures.append((stats["max_in_flight"], stats["connections"], wall, cpu))
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--streams", type=int, nargs="+", default=[200, 500])
    parser.add_argument("--waves", type=int, default=2)
    parser.add_argument("--ttft-ms", type=int, default=3000)
    args = parser.parse_args()
    server, url = start_fake_server()
    try:
        print(f"load average {' '.join(Path('/proc/loadavg').read_text().split()[:3])}; {os.cpu_count()} CPUs")
        print("| streams | transport | wave | most in flight | connections opened | wall | ideal | CPU |")
        print("|---:|---|---:|---:|---:|---:|---:|---:|")
        for streams in args.streams:
            for name, transport in transports().items():
                figures = asyncio.run(run(url, transport, streams, args.waves, args.ttft_ms))
                for wave, (most, opened, wall, cpu) in enumerate(figures, 1):
                    ideal = f"{args.ttft_ms / 1000:.2f} s"
                    print(f"| {streams} | {name} | {wave} | {most} | {opened} | {wall:.2f} s | {ideal} | {cpu:.2f} s |")
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
