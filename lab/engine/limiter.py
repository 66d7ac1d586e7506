"""Per-connection limits shared by every worker: at most `max_concurrency` requests at once and `rpm` a minute.

Services mode keeps the slots in Redis, so all worker processes on all hosts draw from one pool. A slot is a
lease that its holder renews while it streams; a worker killed mid-answer stops renewing, and its slot comes
back when the lease runs out. Embedded mode has one process, so the same interface is kept in memory.
"""

from __future__ import annotations

import asyncio
import threading
import time
import uuid
from abc import ABC, abstractmethod
from collections import deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass

import redis.asyncio as aioredis
from django.conf import settings

LEASE_S = 30.0  # a slot not renewed for this long is free again
WINDOW_S = 60.0  # the requests-per-minute window
POLL_S = 0.02  # how often a waiter looks for a slot freed by another process


@dataclass(frozen=True)
class Limit:
    key: str  # what is limited, e.g. "connection-12"
    max_concurrency: int
    rpm: int


@dataclass(frozen=True)
class Slot:
    waited_s: float  # time spent waiting for it, reported when a variant times out


class Limiter(ABC):
    """One per event loop. Waiters in this loop queue in arrival order and only the first asks for a slot: it is
    woken as soon as a slot here is freed, and notices slots freed by other processes by polling. (Were every
    waiter to poll, a full pool with dozens waiting would cost Redis and the worker thousands of calls a second.)"""

    def __init__(self, *, lease_s: float = LEASE_S, window_s: float = WINDOW_S, poll_s: float = POLL_S):
        self.lease_s, self.window_s, self.poll_s = lease_s, window_s, poll_s
        self._freed: dict[str, asyncio.Condition] = {}
        self._queues: dict[str, asyncio.Lock] = {}  # fair: a Lock wakes its waiters in arrival order

    @asynccontextmanager
    async def slot(self, limit: Limit) -> AsyncIterator[Slot]:
        """Wait for a slot (cancel the caller to stop waiting), hold it while the body runs, then free it."""
        token = uuid.uuid4().hex
        started = time.monotonic()
        async with self._queues.setdefault(limit.key, asyncio.Lock()):
            while (wait_s := await self._try_acquire(limit, token)) is not None:
                # A full rpm window says how long until it has room; a full pool is polled.
                await self._until_freed(limit.key, min(max(wait_s, self.poll_s), 1.0))
        keeper = asyncio.create_task(self._keep_alive(limit, token))
        try:
            yield Slot(waited_s=time.monotonic() - started)
        finally:
            keeper.cancel()
            await self._release(limit, token)
            await self._wake_one(limit.key)

    async def _until_freed(self, key: str, timeout_s: float) -> None:
        freed = self._freed.setdefault(key, asyncio.Condition())
        async with freed:
            with suppress(TimeoutError):
                await asyncio.wait_for(freed.wait(), timeout_s)

    async def _wake_one(self, key: str) -> None:
        # One waiter, not all: each freed slot is one chance, and a herd would only hammer Redis.
        if freed := self._freed.get(key):
            async with freed:
                freed.notify(1)

    async def _keep_alive(self, limit: Limit, token: str) -> None:
        while True:
            await asyncio.sleep(self.lease_s / 3)
            await self._renew(limit, token)

    @abstractmethod
    async def _try_acquire(self, limit: Limit, token: str) -> float | None:
        """Take a slot and count a request: None on success, else roughly how many seconds to wait."""

    @abstractmethod
    async def _renew(self, limit: Limit, token: str) -> None: ...

    @abstractmethod
    async def _release(self, limit: Limit, token: str) -> None: ...

    @abstractmethod
    async def in_flight(self, limit: Limit) -> int:
        """How many slots are held now (for the benchmark and tests)."""

    async def aclose(self) -> None:  # noqa: B027 - most limiters hold no connection; the Redis one overrides it
        """Close any connection the limiter holds."""


# Returns 0 when the slot is taken, -1 when the pool is full, else milliseconds until the rpm window has room.
# Time comes from the Redis server so workers on hosts with skewed clocks agree.
ACQUIRE_SCRIPT = """
local now_parts = redis.call('TIME')
local now = tonumber(now_parts[1]) * 1000 + math.floor(tonumber(now_parts[2]) / 1000)
local token, max_concurrency, rpm = ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])
local lease_ms, window_ms = tonumber(ARGV[4]), tonumber(ARGV[5])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= max_concurrency then
  return -1
end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - window_ms)
if redis.call('ZCARD', KEYS[2]) >= rpm then
  local oldest = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
  return math.max(1, tonumber(oldest[2]) + window_ms - now)
end
redis.call('ZADD', KEYS[1], now + lease_ms, token)
redis.call('PEXPIRE', KEYS[1], lease_ms * 2)
redis.call('ZADD', KEYS[2], now, token)
redis.call('PEXPIRE', KEYS[2], window_ms)
return 0
"""

RENEW_SCRIPT = """
local now_parts = redis.call('TIME')
local now = tonumber(now_parts[1]) * 1000 + math.floor(tonumber(now_parts[2]) / 1000)
redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 2)
return 0
"""

COUNT_SCRIPT = """
local now_parts = redis.call('TIME')
local now = tonumber(now_parts[1]) * 1000 + math.floor(tonumber(now_parts[2]) / 1000)
return redis.call('ZCOUNT', KEYS[1], '(' .. now, '+inf')
"""


class RedisLimiter(Limiter):
    """Slots as a sorted set of tokens scored by lease expiry; requests as a sorted set scored by start time."""

    def __init__(self, client: aioredis.Redis, **kwargs):
        super().__init__(**kwargs)
        self.client = client
        self._acquire = client.register_script(ACQUIRE_SCRIPT)
        self._renew_script = client.register_script(RENEW_SCRIPT)
        self._count = client.register_script(COUNT_SCRIPT)

    @staticmethod
    def _keys(limit: Limit) -> list[str]:
        # The braces keep both keys in one hash slot, as a Redis Cluster needs for a script.
        return [f"promptlab:limit:{{{limit.key}}}:slots", f"promptlab:limit:{{{limit.key}}}:requests"]

    async def _try_acquire(self, limit: Limit, token: str) -> float | None:
        args = [token, limit.max_concurrency, limit.rpm, int(self.lease_s * 1000), int(self.window_s * 1000)]
        result = int(await self._acquire(keys=self._keys(limit), args=args))
        if result == 0:
            return None
        return self.poll_s if result < 0 else result / 1000

    async def _renew(self, limit: Limit, token: str) -> None:
        await self._renew_script(keys=self._keys(limit)[:1], args=[token, int(self.lease_s * 1000)])

    async def _release(self, limit: Limit, token: str) -> None:
        await self.client.zrem(self._keys(limit)[0], token)

    async def in_flight(self, limit: Limit) -> int:
        return int(await self._count(keys=self._keys(limit)[:1]))

    async def aclose(self) -> None:
        await self.client.aclose()


class LocalLimiter(Limiter):
    """The same rules in process memory, shared by the embedded worker's threads (each runs its own loop)."""

    _lock = threading.Lock()
    _slots: dict[str, dict[str, float]] = {}
    _requests: dict[str, deque[float]] = {}

    async def _try_acquire(self, limit: Limit, token: str) -> float | None:
        now = time.monotonic()
        with self._lock:
            slots = self._slots.setdefault(limit.key, {})
            for held, expires in list(slots.items()):
                if expires <= now:
                    del slots[held]
            if len(slots) >= limit.max_concurrency:
                return self.poll_s
            requests = self._requests.setdefault(limit.key, deque())
            while requests and requests[0] <= now - self.window_s:
                requests.popleft()
            if len(requests) >= limit.rpm:
                return requests[0] + self.window_s - now
            slots[token] = now + self.lease_s
            requests.append(now)
        return None

    async def _renew(self, limit: Limit, token: str) -> None:
        with self._lock:
            slots = self._slots.get(limit.key, {})
            if token in slots:
                slots[token] = time.monotonic() + self.lease_s

    async def _release(self, limit: Limit, token: str) -> None:
        with self._lock:
            self._slots.get(limit.key, {}).pop(token, None)

    async def in_flight(self, limit: Limit) -> int:
        now = time.monotonic()
        with self._lock:
            return sum(1 for expires in self._slots.get(limit.key, {}).values() if expires > now)


def make_limiter() -> Limiter:
    """The limiter of this deployment. Call it in the event loop that will use it: a Redis client binds its
    connections to the loop that first uses them."""
    if not settings.REDIS_URL:
        return LocalLimiter()
    # A connection that broke (a Redis restart, a network blip) is replaced when a command fails on it.
    return RedisLimiter(aioredis.Redis.from_url(settings.REDIS_URL, **settings.REDIS_CONNECTION_RETRY))


@asynccontextmanager
async def open_limiter() -> AsyncIterator[Limiter]:
    """A limiter for one piece of work, closed after it (the worker's rounds share the runtime's instead)."""
    limiter = make_limiter()
    try:
        yield limiter
    finally:
        await limiter.aclose()
