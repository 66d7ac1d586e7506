"""The engine's HTTP transport: its connections split over several small httpcore pools instead of one large one.

Why: httpcore's pool walks all of its connections on every request and every response, and for each idle one
counts them all again (httpcore #1035): the cost of a request grows with the square of the connections the pool
holds. Against a provider that keeps connections open, 200 calls at once took a whole core in that walk alone (a
3,000-call run: 190 s of CPU instead of about 10), and the same bug counts busy connections as idle ones, so past
`max_keepalive_connections` connections every connection that became idle was closed and opened again.

Here each request goes to the first pool with fewer than `shard_size` requests under way (a new pool is opened
when all are busy, up to `max_connections` in all), so no pool ever holds many connections, and connections are
reused as a provider expects: the first pools stay warm and busy, and the later ones are idle once the load falls.

Why two: even a small pool's walk asks every idle connection, on every request and every response, whether the
server has closed it (a readability poll reached through anyio's socket attributes, which it rebuilds each time).
With pools of 16 that took 9 % of an experiment's CPU at 20 calls at once; with pools of 2 a walk sees the
connection in hand and at most one other (docs/benchmarks.md, 2026-12-03: a fifth to a third less CPU per call).

Each pool reaches the network through asyncio's own transports (aio_network.py) rather than anyio's.
"""

from __future__ import annotations

import math
import ssl
from collections.abc import AsyncIterator
from dataclasses import dataclass

import httpcore
import httpx

from ..providers.http import tls_context
from .aio_network import AsyncioBackend

SHARD_SIZE = 2  # requests under way in one pool, and the connections it keeps


class _PoolTransport(httpx.AsyncHTTPTransport):
    """httpx's transport (its request and exception mapping) over an httpcore pool on the asyncio backend: httpx
    takes no network backend of its own, so the pool it made is replaced by one made with the same settings."""

    def __init__(self, *, verify: ssl.SSLContext | bool, limits: httpx.Limits):
        super().__init__(verify=verify, limits=limits)
        self._pool = httpcore.AsyncConnectionPool(
            ssl_context=httpx.create_ssl_context(verify=verify),  # `verify` itself when it is a context
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=AsyncioBackend(),
        )


@dataclass
class _Shard:
    transport: _PoolTransport
    active: int = 0  # requests sent and not yet closed


class ShardedTransport(httpx.AsyncBaseTransport):
    def __init__(
        self,
        *,
        verify: ssl.SSLContext | bool | None = None,
        max_connections: int = 500,
        keepalive_expiry: float = 30.0,
        shard_size: int = SHARD_SIZE,
    ):
        self.shard_size = shard_size
        self.max_shards = max(1, math.ceil(max_connections / shard_size))
        self._limits = httpx.Limits(
            max_connections=shard_size, max_keepalive_connections=shard_size, keepalive_expiry=keepalive_expiry
        )
        # One context for every pool (default: the process's shared one): building one takes tens of milliseconds.
        self._verify = tls_context() if verify is None else verify
        self.shards: list[_Shard] = []

    def _pick(self) -> _Shard:
        for shard in self.shards:
            if shard.active < self.shard_size:
                return shard
        if len(self.shards) < self.max_shards:
            self.shards.append(_Shard(_PoolTransport(verify=self._verify, limits=self._limits)))
            return self.shards[-1]
        return min(self.shards, key=lambda shard: shard.active)  # every pool full: its own queue waits

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        shard = self._pick()
        shard.active += 1
        try:
            response = await shard.transport.handle_async_request(request)
        except BaseException:
            shard.active -= 1
            raise
        response.stream = _CountedStream(response.stream, shard)
        return response

    async def aclose(self) -> None:
        for shard in self.shards:
            await shard.transport.aclose()


class _CountedStream(httpx.AsyncByteStream):
    """A response's body, which frees its place in the pool's count when closed (httpx closes every response)."""

    def __init__(self, stream: httpx.AsyncByteStream, shard: _Shard):
        self._stream, self._shard = stream, shard
        self._counted = True

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self._stream.__aiter__()  # the body's own iterator: no extra step for each chunk of a stream

    async def aclose(self) -> None:
        if self._counted:
            self._counted = False
            self._shard.active -= 1
        await self._stream.aclose()
