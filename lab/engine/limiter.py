"""Per-connection scheduling shared by every worker: a queue of waiting calls, `max_concurrency` at once, `rpm`
requests and `tpm` tokens a window, and a connection-wide back-off after a 429.

Waiting calls queue first-in first-out within their lane, and interactive waiters go before batch ones; a call
may take a slot only when fewer calls are ahead of it than slots are free, so the order holds across processes.
Each HTTP attempt takes an rpm token: the first with the slot, each retry through `Slot.attempt()`. A 429 pushes
the whole connection back (its `retry-after`, or the adapter's back-off) and halves how many may run at once;
each success gives one back (additive increase, multiplicative decrease, as promptfoo's adaptive scheduler).

Services mode keeps all of it in Redis, so every worker process on every host draws from one queue. A slot is a
lease its holder renews while it streams; a worker killed mid-answer stops renewing and its slot comes back when
the lease runs out; a dead process's waiters leave the queue when its waiting lease does. Embedded mode has one
process, so the same rules are kept in memory. The window is SCHEDULER_WINDOW_S (a minute; tests shorten it).
"""

from __future__ import annotations

import asyncio
import bisect
import math
import threading
import time
import uuid
from abc import ABC, abstractmethod
from collections import defaultdict
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field

import redis.asyncio as aioredis
from django.conf import settings

from lab.cancellation import raise_if_cancelled

LEASE_S = 30.0  # a slot not renewed for this long is free again; so is a waiting process's place in the queue
POLL_S = 0.02  # how often a waiter looks for a slot freed by another process
INTERACTIVE, BATCH = "interactive", "batch"
LANE_RANK = {INTERACTIVE: 0, BATCH: 1}
BACKOFF_MEMORY_S = 300  # how long a connection remembers its 429 back-off when nothing happens
# A request reaches the provider a little after it is counted (connection set-up, a busy host), and providers
# count at arrival: each request stays in the window this much longer, so theirs never sees more than the limit.
SEND_MARGIN_S = 0.5


@dataclass(frozen=True)
class Limit:
    key: str  # what is limited, e.g. "connection-12"
    max_concurrency: int
    rpm: int
    tpm: int = 0  # tokens a window (input + expected output); 0: no token budget
    name: str = ""  # the connection's name, for messages


class QueueDeadlineExceeded(Exception):
    """The call waited its queue deadline for its connection's turn and was given up on (it takes no place)."""

    def __init__(self, waited_s: float, ahead: int):
        super().__init__(f"waited {waited_s:.0f} s ({ahead} ahead)")
        self.waited_s, self.ahead = waited_s, ahead


@dataclass
class Slot:
    """A call's turn on its connection. The adapter asks it before each retry and tells it about a 429."""

    limiter: Limiter
    limit: Limit
    token: str
    waited_s: float  # time spent waiting for it
    tokens: int = 0  # tokens counted against tpm when it was taken
    attempts: int = field(default=1)

    async def attempt(self) -> None:
        """Take an rpm token for another HTTP attempt (a retry), waiting for the window and any back-off."""
        self.attempts += 1
        member = f"{self.token}:{self.attempts}"
        while (wait_s := await self.limiter._attempt(self.limit, member)) is not None:
            await asyncio.sleep(wait_s)

    async def rate_limited(self, delay_s: float) -> None:
        """A 429: the whole connection waits `delay_s` and lets fewer calls run at once for a while."""
        await self.limiter._rate_limited(self.limit, delay_s)

    async def succeeded(self) -> None:
        await self.limiter._succeeded(self.limit)

    async def used(self, tokens: int) -> None:
        """Replace the estimate counted against tpm with what the provider reported."""
        if self.limit.tpm and tokens != self.tokens:
            await self.limiter._used(self.limit, self.token, self.tokens, tokens)
            self.tokens = tokens


OnWait = Callable[[int], Awaitable[None]]


class Limiter(ABC):
    """One per event loop. Of this loop's waiters of one lane only the first in the shared queue asks for a slot:
    it is woken as soon as a slot here is freed, and notices slots freed elsewhere by polling. (Were every waiter
    to poll, a full pool with hundreds waiting would cost Redis and the worker thousands of calls a second.)"""

    def __init__(self, *, lease_s: float = LEASE_S, window_s: float | None = None, poll_s: float = POLL_S):
        self.lease_s, self.poll_s = lease_s, poll_s
        self.window_s = (window_s if window_s is not None else settings.SCHEDULER_WINDOW_S) + SEND_MARGIN_S
        self.process = uuid.uuid4().hex  # this limiter's name among the waiters of every process
        self._freed: dict[str, asyncio.Condition] = {}
        # This process's waiters per (connection, lane), in the shared queue's order, and how each is woken.
        self._local: dict[tuple[str, str], list[tuple[tuple[float, ...], str]]] = defaultdict(list)
        self._turns: dict[str, asyncio.Event] = {}
        self._waiting: dict[str, int] = defaultdict(int)
        self._keeper: asyncio.Task | None = None

    @asynccontextmanager
    async def slot(
        self,
        limit: Limit,
        *,
        lane: str = INTERACTIVE,
        tokens: int = 0,
        queue_deadline_s: float | None = None,
        on_wait: OnWait | None = None,
    ) -> AsyncIterator[Slot]:
        """Wait for a turn (at most `queue_deadline_s`; cancel the caller to stop waiting), hold it while the body
        runs, then free it. `on_wait(ahead)` hears how many calls are ahead while this one waits."""
        token = uuid.uuid4().hex
        started = time.monotonic()
        try:
            async with asyncio.timeout(queue_deadline_s):
                await self._wait_for_turn(limit, token, lane, tokens, on_wait)
        except TimeoutError:
            ahead = await self._leave(limit, token)
            raise QueueDeadlineExceeded(time.monotonic() - started, ahead) from None
        except BaseException:
            await self._leave(limit, token)
            raise
        keeper = asyncio.create_task(self._keep_alive(limit, token))
        try:
            yield Slot(self, limit, token, waited_s=time.monotonic() - started, tokens=tokens)
        finally:
            keeper.cancel()
            await self._release(limit, token)
            await self._wake_one(limit.key)

    async def _wait_for_turn(self, limit: Limit, token: str, lane: str, tokens: int, on_wait: OnWait | None) -> None:
        self._waiting[limit.key] += 1
        queue = self._local[(limit.key, lane)]
        turn = self._turns[token] = asyncio.Event()
        place = None
        try:
            self._start_keeper()
            ahead, order = await self._join(limit, token, lane)
            place = (order, token)  # the order the shared queue keeps, ties broken as Redis does: by member
            bisect.insort(queue, place)
            reported = None
            if on_wait is not None and ahead:  # behind others: say so before waiting behind this process's own
                reported = ahead
                await on_wait(ahead)
            while True:
                raise_if_cancelled()
                if queue[0] != place:  # only this process's first waiter of the lane asks for a slot
                    await turn.wait()
                    turn.clear()
                    continue
                wait_s, ahead = await self._try_acquire(limit, token, tokens, lane)
                if wait_s is None:
                    return
                if on_wait is not None and ahead != reported:
                    reported = ahead
                    await on_wait(ahead)
                # A full rpm or tpm window, or a back-off, says how long to wait; a full pool is polled.
                await self._until_freed(limit.key, min(max(wait_s, self.poll_s), 1.0))
        finally:
            self._waiting[limit.key] -= 1
            del self._turns[token]
            if place is not None:
                del queue[bisect.bisect_left(queue, place)]
                if queue:
                    self._turns[queue[0][1]].set()  # the next one of this process asks now

    def _start_keeper(self) -> None:
        if self._keeper is None or self._keeper.done():
            self._keeper = asyncio.create_task(self._keep_waiting())

    async def _keep_waiting(self) -> None:
        """Renew this process's place in the queues it waits in (one call per connection, however many wait)."""
        while any(self._waiting.values()):
            raise_if_cancelled()
            for key, count in list(self._waiting.items()):
                if count:
                    await self._renew_waiting(key)
            await asyncio.sleep(self.lease_s / 3)

    async def _until_freed(self, key: str, timeout_s: float) -> None:
        freed = self._freed.setdefault(key, asyncio.Condition())
        # asyncio.timeout, not wait_for, which loses a cancel on Python 3.11 (lab.cancellation).
        with suppress(TimeoutError):
            async with asyncio.timeout(timeout_s), freed:
                await freed.wait()

    async def _wake_one(self, key: str) -> None:
        # One waiter, not all: each freed slot is one chance, and a herd would only hammer Redis.
        if freed := self._freed.get(key):
            async with freed:
                freed.notify(1)

    async def _keep_alive(self, limit: Limit, token: str) -> None:
        while True:
            raise_if_cancelled()  # a keeper that outlived its slot would renew nothing, forever
            await asyncio.sleep(self.lease_s / 3)
            await self._renew(limit, token)

    @abstractmethod
    async def _join(self, limit: Limit, token: str, lane: str) -> tuple[int, tuple[float, ...]]:
        """Enter the connection's queue; returns how many calls are ahead, and the place's order (lower first)."""

    @abstractmethod
    async def _try_acquire(self, limit: Limit, token: str, tokens: int, lane: str) -> tuple[float | None, int]:
        """Take a slot, an rpm token and `tokens` of tpm: (None, 0) on success, else (seconds to wait, calls ahead)."""

    @abstractmethod
    async def _leave(self, limit: Limit, token: str) -> int:
        """Leave the queue without a slot; returns how many calls were ahead."""

    @abstractmethod
    async def _renew_waiting(self, key: str) -> None: ...

    @abstractmethod
    async def _attempt(self, limit: Limit, member: str) -> float | None:
        """Count one more request now: None on success, else seconds to wait."""

    @abstractmethod
    async def _rate_limited(self, limit: Limit, delay_s: float) -> None: ...

    @abstractmethod
    async def _succeeded(self, limit: Limit) -> None: ...

    @abstractmethod
    async def _used(self, limit: Limit, token: str, estimated: int, actual: int) -> None: ...

    @abstractmethod
    async def _renew(self, limit: Limit, token: str) -> None: ...

    @abstractmethod
    async def _release(self, limit: Limit, token: str) -> None: ...

    @abstractmethod
    async def in_flight(self, limit: Limit) -> int:
        """How many slots are held now (for the benchmark and tests)."""

    def queued_here(self, limit: Limit) -> int:
        """How many of this limiter's calls have joined the connection's queue and wait in it (for tests)."""
        return sum(len(queue) for (key, _lane), queue in self._local.items() if key == limit.key)

    async def aclose(self) -> None:  # noqa: B027 - most limiters hold no connection; the Redis one overrides it
        """Close any connection the limiter holds."""


# Keys (one hash slot, as a Redis Cluster needs for a script): 1 slots (token → lease expiry), 2 requests (member →
# time), 3 tokens ("token:n" → time), 4 waiters ("process:token" → lane rank and arrival), 5 processes (process →
# waiting lease expiry), 6 state (backoff_until, penalty). Time comes from the Redis server, so hosts agree.
PRELUDE = """
local now_parts = redis.call('TIME')
local now = tonumber(now_parts[1]) * 1000 + math.floor(tonumber(now_parts[2]) / 1000)
"""

PRUNE = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
for _, process in ipairs(redis.call('ZRANGEBYSCORE', KEYS[5], '-inf', now)) do
  local gone = {}
  for _, member in ipairs(redis.call('ZRANGE', KEYS[4], 0, -1)) do
    if string.sub(member, 1, #process + 1) == process .. ':' then table.insert(gone, member) end
  end
  if #gone > 0 then redis.call('ZREM', KEYS[4], unpack(gone)) end
  redis.call('ZREM', KEYS[5], process)
end
"""

# ARGV: member, lane rank, process, waiting lease ms. Returns how many are ahead and the place's score.
JOIN_SCRIPT = (
    PRELUDE
    + PRUNE
    + """
local order = tonumber(ARGV[2]) * 1e13 + now
redis.call('ZADD', KEYS[4], order, ARGV[1])
redis.call('ZADD', KEYS[5], now + tonumber(ARGV[4]), ARGV[3])
redis.call('PEXPIRE', KEYS[4], tonumber(ARGV[4]) * 4)
redis.call('PEXPIRE', KEYS[5], tonumber(ARGV[4]) * 4)
return {redis.call('ZRANK', KEYS[4], ARGV[1]), order}
"""
)

# Returns {ms to wait or 0 when taken or -1 when the pool is full, calls ahead}. Checks the back-off, the rpm
# window and the tpm window before taking. ARGV: member, token, max_concurrency, rpm, tpm, lease ms, window ms,
# tokens, lane rank.
ACQUIRE_SCRIPT = (
    PRELUDE
    + PRUNE
    + """
local member, token = ARGV[1], ARGV[2]
local max_concurrency, rpm, tpm = tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local lease_ms, window_ms, tokens = tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
local ahead = redis.call('ZRANK', KEYS[4], member)
if not ahead then
  -- Its process's waiting lease ran out (a long stall): it queues again, at the back of its lane.
  redis.call('ZADD', KEYS[4], tonumber(ARGV[9]) * 1e13 + now, member)
  return {-1, redis.call('ZRANK', KEYS[4], member)}
end
local penalty = tonumber(redis.call('HGET', KEYS[6], 'penalty') or '0')
local allowed = math.max(1, max_concurrency - penalty)
if ahead >= allowed - redis.call('ZCARD', KEYS[1]) then return {-1, ahead} end
local backoff = tonumber(redis.call('HGET', KEYS[6], 'backoff_until') or '0')
if backoff > now then return {backoff - now, ahead} end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - window_ms)
if redis.call('ZCARD', KEYS[2]) >= rpm then
  local oldest = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
  return {math.max(1, tonumber(oldest[2]) + window_ms - now), ahead}
end
if tpm > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now - window_ms)
  local used = 0
  for _, entry in ipairs(redis.call('ZRANGE', KEYS[3], 0, -1)) do
    used = used + tonumber(string.match(entry, ':(%d+)$'))
  end
  if used > 0 and used + tokens > tpm then
    local oldest = redis.call('ZRANGE', KEYS[3], 0, 0, 'WITHSCORES')
    return {math.max(1, tonumber(oldest[2]) + window_ms - now), ahead}
  end
  redis.call('ZADD', KEYS[3], now, token .. ':' .. tokens)
  redis.call('PEXPIRE', KEYS[3], window_ms)
end
redis.call('ZREM', KEYS[4], member)
redis.call('ZADD', KEYS[1], now + lease_ms, token)
redis.call('PEXPIRE', KEYS[1], lease_ms * 2)
redis.call('ZADD', KEYS[2], now, token .. ':1')
redis.call('PEXPIRE', KEYS[2], window_ms)
return {0, 0}
"""
)

# A retry's request. ARGV: member, rpm, window ms. Returns ms to wait, or 0 when counted.
ATTEMPT_SCRIPT = (
    PRELUDE
    + """
local backoff = tonumber(redis.call('HGET', KEYS[3], 'backoff_until') or '0')
if backoff > now then return backoff - now end
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - tonumber(ARGV[3]))
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[2]) then
  local oldest = redis.call('ZRANGE', KEYS[2], 0, 0, 'WITHSCORES')
  return math.max(1, tonumber(oldest[2]) + tonumber(ARGV[3]) - now)
end
redis.call('ZADD', KEYS[2], now, ARGV[1])
redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[3]))
return 0
"""
)

# ARGV: delay ms, max_concurrency, memory ms. Halves the calls allowed at once and pushes the connection back.
RATE_LIMITED_SCRIPT = (
    PRELUDE
    + """
local until_ms = now + tonumber(ARGV[1])
if until_ms > tonumber(redis.call('HGET', KEYS[1], 'backoff_until') or '0') then
  redis.call('HSET', KEYS[1], 'backoff_until', until_ms)
end
local max_concurrency = tonumber(ARGV[2])
local penalty = tonumber(redis.call('HGET', KEYS[1], 'penalty') or '0')
local allowed = math.max(1, max_concurrency - penalty)
redis.call('HSET', KEYS[1], 'penalty', max_concurrency - math.max(1, math.floor(allowed / 2)))
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[3]))
return 0
"""
)

SUCCEEDED_SCRIPT = """
if tonumber(redis.call('HGET', KEYS[1], 'penalty') or '0') > 0 then redis.call('HINCRBY', KEYS[1], 'penalty', -1) end
return 0
"""

USED_SCRIPT = """
local score = redis.call('ZSCORE', KEYS[1], ARGV[1] .. ':' .. ARGV[2])
if score then
  redis.call('ZREM', KEYS[1], ARGV[1] .. ':' .. ARGV[2])
  redis.call('ZADD', KEYS[1], score, ARGV[1] .. ':' .. ARGV[3])
end
return 0
"""

LEAVE_SCRIPT = """
local ahead = redis.call('ZRANK', KEYS[1], ARGV[1])
redis.call('ZREM', KEYS[1], ARGV[1])
return ahead or 0
"""

# KEYS: waiters, processes. ARGV: process, lease ms.
RENEW_WAITING_SCRIPT = (
    PRELUDE
    + """
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 4)
redis.call('PEXPIRE', KEYS[2], tonumber(ARGV[2]) * 4)
return 0
"""
)

RENEW_SCRIPT = (
    PRELUDE
    + """
redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[2]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[2]) * 4)
return 0
"""
)

COUNT_SCRIPT = (
    PRELUDE
    + """
return redis.call('ZCOUNT', KEYS[1], '(' .. now, '+inf')
"""
)


# Commands one limiter has in flight at once: hundreds of calls joining a queue together would otherwise each take
# a connection from the client's pool, which refuses ("Too many connections") rather than waits.
REDIS_CALLS_AT_ONCE = 16


class RedisLimiter(Limiter):
    """The queue, slots and windows as sorted sets in Redis, shared by every worker process."""

    def __init__(self, client: aioredis.Redis, **kwargs):
        super().__init__(**kwargs)
        self.client = client
        self._calls = asyncio.Semaphore(REDIS_CALLS_AT_ONCE)
        self._join_script = self._script(JOIN_SCRIPT)
        self._acquire = self._script(ACQUIRE_SCRIPT)
        self._attempt_script = self._script(ATTEMPT_SCRIPT)
        self._rate_limited_script = self._script(RATE_LIMITED_SCRIPT)
        self._succeeded_script = self._script(SUCCEEDED_SCRIPT)
        self._used_script = self._script(USED_SCRIPT)
        self._leave_script = self._script(LEAVE_SCRIPT)
        self._renew_script = self._script(RENEW_SCRIPT)
        self._renew_waiting_script = self._script(RENEW_WAITING_SCRIPT)
        self._count = self._script(COUNT_SCRIPT)

    def _script(self, source: str) -> Callable[..., Awaitable]:
        script = self.client.register_script(source)

        async def run(**kwargs):
            async with self._calls:
                return await script(**kwargs)

        return run

    @staticmethod
    def _keys(key: str) -> list[str]:
        # The braces keep every key in one hash slot.
        return [
            f"promptlab:limit:{{{key}}}:{part}"
            for part in ("slots", "requests", "tokens", "waiters", "processes", "state")
        ]

    def _member(self, token: str) -> str:
        return f"{self.process}:{token}"

    def _lease_ms(self) -> int:
        return int(self.lease_s * 1000)

    async def _join(self, limit: Limit, token: str, lane: str) -> tuple[int, tuple[float, ...]]:
        args = [self._member(token), LANE_RANK[lane], self.process, self._lease_ms()]
        ahead, order = await self._join_script(keys=self._keys(limit.key), args=args)
        return int(ahead), (float(order),)

    async def _try_acquire(self, limit: Limit, token: str, tokens: int, lane: str) -> tuple[float | None, int]:
        window_ms = int(self.window_s * 1000)
        args = [self._member(token), token, limit.max_concurrency, limit.rpm, limit.tpm, self._lease_ms()]
        wait_ms, ahead = await self._acquire(
            keys=self._keys(limit.key), args=[*args, window_ms, tokens, LANE_RANK[lane]]
        )
        wait_ms, ahead = int(wait_ms), int(ahead)
        if wait_ms == 0:
            return None, 0
        return (self.poll_s if wait_ms < 0 else wait_ms / 1000), ahead

    async def _leave(self, limit: Limit, token: str) -> int:
        keys = self._keys(limit.key)
        return int(await self._leave_script(keys=[keys[3]], args=[self._member(token)]))

    async def _renew_waiting(self, key: str) -> None:
        keys = self._keys(key)
        await self._renew_waiting_script(keys=[keys[3], keys[4]], args=[self.process, self._lease_ms()])

    async def _attempt(self, limit: Limit, member: str) -> float | None:
        keys = self._keys(limit.key)
        args = [member, limit.rpm, int(self.window_s * 1000)]
        wait_ms = int(await self._attempt_script(keys=[keys[0], keys[1], keys[5]], args=args))
        return None if wait_ms == 0 else wait_ms / 1000

    async def _rate_limited(self, limit: Limit, delay_s: float) -> None:
        args = [int(delay_s * 1000), limit.max_concurrency, BACKOFF_MEMORY_S * 1000]
        await self._rate_limited_script(keys=[self._keys(limit.key)[5]], args=args)

    async def _succeeded(self, limit: Limit) -> None:
        await self._succeeded_script(keys=[self._keys(limit.key)[5]])

    async def _used(self, limit: Limit, token: str, estimated: int, actual: int) -> None:
        await self._used_script(keys=[self._keys(limit.key)[2]], args=[token, estimated, actual])

    async def _renew(self, limit: Limit, token: str) -> None:
        await self._renew_script(keys=self._keys(limit.key)[:1], args=[token, self._lease_ms()])

    async def _release(self, limit: Limit, token: str) -> None:
        async with self._calls:
            await self.client.zrem(self._keys(limit.key)[0], token)

    async def in_flight(self, limit: Limit) -> int:
        return int(await self._count(keys=self._keys(limit.key)[:1]))

    async def aclose(self) -> None:
        await self.client.aclose()


@dataclass
class _Connection:
    """One connection's state in process memory (embedded mode)."""

    slots: dict[str, float] = field(default_factory=dict)  # token → lease expiry
    requests: list[float] = field(default_factory=list)  # start times in the window
    tokens: dict[str, tuple[float, int]] = field(default_factory=dict)  # token → (time, tokens)
    waiters: dict[str, tuple[int, float]] = field(default_factory=dict)  # token → (lane rank, arrival)
    backoff_until: float = 0.0
    penalty: int = 0


class LocalLimiter(Limiter):
    """The same rules in process memory, shared by the embedded worker's threads (each runs its own loop)."""

    _lock = threading.Lock()
    _connections: dict[str, _Connection] = defaultdict(_Connection)

    def _state(self, key: str, now: float) -> _Connection:
        state = self._connections[key]
        state.slots = {token: expires for token, expires in state.slots.items() if expires > now}
        state.requests = [at for at in state.requests if at > now - self.window_s]
        state.tokens = {token: spent for token, spent in state.tokens.items() if spent[0] > now - self.window_s}
        return state

    def _ahead(self, state: _Connection, token: str) -> int:
        mine = state.waiters[token]
        return sum(1 for other in state.waiters.values() if other < mine)

    async def _join(self, limit: Limit, token: str, lane: str) -> tuple[int, tuple[float, ...]]:
        with self._lock:
            state = self._state(limit.key, time.monotonic())
            state.waiters[token] = (LANE_RANK[lane], time.monotonic())
            return self._ahead(state, token), state.waiters[token]

    async def _try_acquire(self, limit: Limit, token: str, tokens: int, lane: str) -> tuple[float | None, int]:
        now = time.monotonic()
        with self._lock:
            state = self._state(limit.key, now)
            ahead = self._ahead(state, token)
            if ahead >= max(1, limit.max_concurrency - state.penalty) - len(state.slots):
                return self.poll_s, ahead
            if state.backoff_until > now:
                return state.backoff_until - now, ahead
            if len(state.requests) >= limit.rpm:
                return min(state.requests) + self.window_s - now, ahead
            used = sum(spent for _, spent in state.tokens.values())
            if limit.tpm and used and used + tokens > limit.tpm:
                return min(at for at, _ in state.tokens.values()) + self.window_s - now, ahead
            del state.waiters[token]
            state.slots[token] = now + self.lease_s
            state.requests.append(now)
            if limit.tpm:
                state.tokens[token] = (now, tokens)
        return None, 0

    async def _leave(self, limit: Limit, token: str) -> int:
        with self._lock:
            state = self._connections[limit.key]
            ahead = self._ahead(state, token) if token in state.waiters else 0
            state.waiters.pop(token, None)
            return ahead

    async def _renew_waiting(self, key: str) -> None:
        """One process: its waiters never outlive it, so there is no lease to renew."""

    async def _attempt(self, limit: Limit, member: str) -> float | None:
        now = time.monotonic()
        with self._lock:
            state = self._state(limit.key, now)
            if state.backoff_until > now:
                return state.backoff_until - now
            if len(state.requests) >= limit.rpm:
                return min(state.requests) + self.window_s - now
            state.requests.append(now)
        return None

    async def _rate_limited(self, limit: Limit, delay_s: float) -> None:
        with self._lock:
            state = self._connections[limit.key]
            state.backoff_until = max(state.backoff_until, time.monotonic() + delay_s)
            allowed = max(1, limit.max_concurrency - state.penalty)
            state.penalty = limit.max_concurrency - max(1, math.floor(allowed / 2))

    async def _succeeded(self, limit: Limit) -> None:
        with self._lock:
            state = self._connections[limit.key]
            state.penalty = max(0, state.penalty - 1)

    async def _used(self, limit: Limit, token: str, estimated: int, actual: int) -> None:
        with self._lock:
            state = self._connections[limit.key]
            if token in state.tokens:
                state.tokens[token] = (state.tokens[token][0], actual)

    async def _renew(self, limit: Limit, token: str) -> None:
        with self._lock:
            slots = self._connections[limit.key].slots
            if token in slots:
                slots[token] = time.monotonic() + self.lease_s

    async def _release(self, limit: Limit, token: str) -> None:
        with self._lock:
            self._connections[limit.key].slots.pop(token, None)

    async def in_flight(self, limit: Limit) -> int:
        now = time.monotonic()
        with self._lock:
            return sum(1 for expires in self._connections[limit.key].slots.values() if expires > now)


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
