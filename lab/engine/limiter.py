"""Per-connection scheduling shared by every worker: a queue of waiting calls, `max_concurrency` at once, `rpm`
requests and `tpm` tokens a window, and a connection-wide back-off after a 429.

Waiting calls queue first-in first-out within their lane, and interactive waiters go before batch ones; a call
may take a slot only when fewer calls are ahead of it than slots are free, so the order holds across processes.
Each HTTP attempt takes an rpm token: the first with the slot, each retry through `Slot.attempt()`. A 429 pushes
the whole connection back (its `retry-after`, or the adapter's back-off) and halves how many may run at once;
each success gives one back (additive increase, multiplicative decrease, as promptfoo's adaptive scheduler),
counted when its slot is freed.

Services mode keeps all of it in Redis, so every worker process on every host draws from one queue. A slot is a
lease its holder renews while it streams; a worker killed mid-answer stops renewing and its slot comes back when
the lease runs out; a dead process's waiters leave the queue when its waiting lease does. Embedded mode has one
process, so the same rules are kept in memory. The window is SCHEDULER_WINDOW_S (a minute; tests shorten it).

A batch call usually goes at once, so that path costs two scripts: joining the queue and taking the slot are one,
freeing it and counting its success another. A limiter sends its scripts in order, those issued while a batch is
on its way together as the next (script_pipe.py), so calls arriving or ending together share round trips, and a
freed slot is not waited for; and the takes (or frees) of calls that follow each other there on one connection go
as one script run, which runs them one by one as it would have run each. One keeper per limiter renews every
lease it has, one call per connection each third of a lease, so a call shorter than that renews nothing.

The Redis scripts are Lua files in lua/ beside this module, read once at import; the scripts that take a slot
share the clock (prelude.lua), the pruning (prune.lua) and `take` (take.lua), joined before their own part.
"""

from __future__ import annotations

import asyncio
import bisect
import itertools
import logging
import math
import threading
import time
import uuid
from abc import ABC, abstractmethod
from collections import defaultdict, deque
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import redis.asyncio as aioredis
from django.conf import settings

from lab.cancellation import raise_if_cancelled

from .script_pipe import Script, ScriptPipe

logger = logging.getLogger(__name__)
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
    successes: int = 0  # answers that came back, each giving back one of a 429's penalty when the slot is freed

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
        """An answer came back: the connection may run one more call at once after a 429, from when this slot is
        freed (counted then, in the same Redis call, rather than in one of its own)."""
        self.successes += 1

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
        # Each call's token, unique across processes: this limiter's name and a count (a uuid4 a call read the
        # system's random source each time).
        self._tokens = (f"{self.process}-{n}" for n in itertools.count())
        self._freed: dict[str, asyncio.Condition] = {}
        # This process's waiters per (connection, lane), in the shared queue's order, and how each is woken.
        self._local: dict[tuple[str, str], list[tuple[tuple[float, ...], str]]] = defaultdict(list)
        self._turns: dict[str, asyncio.Event] = {}
        self._waiting: dict[str, int] = defaultdict(int)
        self._held: dict[str, set[str]] = defaultdict(set)  # this process's slots per connection, renewed by the keeper
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
        token = next(self._tokens)
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
        held = self._held[limit.key]
        held.add(token)
        self._start_keeper()
        slot = Slot(self, limit, token, waited_s=time.monotonic() - started, tokens=tokens)
        try:
            yield slot
        finally:
            held.discard(token)
            await self._release(limit, token, slot.successes)
            if self._waiting[limit.key]:
                await self._wake_one(limit.key)

    async def _wait_for_turn(self, limit: Limit, token: str, lane: str, tokens: int, on_wait: OnWait | None) -> None:
        queue = self._local[(limit.key, lane)]
        # Only this process's first waiter of the lane asks for a slot: with none waiting, the call asks as it joins.
        # Calls arriving while another's ask is under way ask too (a batch arriving at once shares round trips);
        # the script keeps the order (each goes only if fewer calls are ahead of it than slots are free).
        wait_s, ahead, order = await self._enter(limit, token, lane, tokens, ask=not queue)
        if wait_s is None:
            return
        place = (order, token)  # the order the shared queue keeps, ties broken as Redis does: by member
        bisect.insort(queue, place)
        turn = self._turns[token] = asyncio.Event()
        self._waiting[limit.key] += 1
        self._start_keeper()
        try:
            reported = None
            if on_wait is not None and ahead:  # behind others: say so before waiting behind this process's own
                reported = ahead
                await on_wait(ahead)
            while True:
                if wait_s:  # a full rpm or tpm window, or a back-off, says how long to wait; a full pool is polled
                    await self._until_freed(limit.key, min(max(wait_s, self.poll_s), 1.0))
                raise_if_cancelled()
                if queue[0] != place:
                    await turn.wait()
                    turn.clear()
                    wait_s = 0.0  # its turn: it asks at once
                    continue
                wait_s, ahead = await self._try_acquire(limit, token, tokens, lane)
                if wait_s is None:
                    return
                if on_wait is not None and ahead != reported:
                    reported = ahead
                    await on_wait(ahead)
        finally:
            self._waiting[limit.key] -= 1
            del self._turns[token]
            del queue[bisect.bisect_left(queue, place)]
            if queue:
                self._turns[queue[0][1]].set()  # the next one of this process asks now

    def _start_keeper(self) -> None:
        if self._keeper is None or self._keeper.done():
            self._keeper = asyncio.create_task(self._keep_leases())

    async def _keep_leases(self) -> None:
        """Every third of a lease, renew this process's leases: its slots and its place in the queues it waits in,
        one call per connection however many calls hold or wait there. A lease runs a whole lease from when it was
        taken, so one taken since the last round lasts until the next; a call shorter than that renews nothing."""
        while True:
            await asyncio.sleep(self.lease_s / 3)
            raise_if_cancelled()  # a keeper that outlived its loop's work would renew nothing, forever
            keys = [key for key in {*self._held, *self._waiting} if self._held.get(key) or self._waiting.get(key)]
            if not keys:
                return  # the next slot or waiter starts another
            for key in keys:
                try:
                    await self._renew(key, list(self._held.get(key, ())), waiting=self._waiting.get(key, 0) > 0)
                except Exception:  # a Redis blip: the next round tries again, well within the lease
                    logger.warning("Could not renew the leases on %s", key, exc_info=True)

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

    @abstractmethod
    async def _enter(
        self, limit: Limit, token: str, lane: str, tokens: int, *, ask: bool
    ) -> tuple[float | None, int, tuple[float, ...]]:
        """Join the connection's queue and, if `ask`, try for a slot as `_try_acquire` does: (None, 0, order) when
        taken, else (seconds to wait, or 0 when it did not ask; calls ahead; the place's order, lower first)."""

    @abstractmethod
    async def _try_acquire(self, limit: Limit, token: str, tokens: int, lane: str) -> tuple[float | None, int]:
        """Take a slot, an rpm token and `tokens` of tpm: (None, 0) on success, else (seconds to wait, calls ahead)."""

    @abstractmethod
    async def _leave(self, limit: Limit, token: str) -> int:
        """Leave the queue without a slot (freeing one that was taken as the caller was cancelled); returns how
        many calls were ahead."""

    @abstractmethod
    async def _attempt(self, limit: Limit, member: str) -> float | None:
        """Count one more request now: None on success, else seconds to wait."""

    @abstractmethod
    async def _rate_limited(self, limit: Limit, delay_s: float) -> None: ...

    @abstractmethod
    async def _used(self, limit: Limit, token: str, estimated: int, actual: int) -> None: ...

    @abstractmethod
    async def _renew(self, key: str, tokens: list[str], *, waiting: bool) -> None:
        """Renew the leases of these slots and, if `waiting`, of this process's place in the queue."""

    @abstractmethod
    async def _release(self, limit: Limit, token: str, successes: int) -> None:
        """Free the slot, and give back one of a 429's penalty for each success it had."""

    @abstractmethod
    async def in_flight(self, limit: Limit) -> int:
        """How many slots are held now (for the benchmark and tests)."""

    @abstractmethod
    async def flushed(self) -> None:
        """Until every change this limiter made so far is seen by every process (a freed slot is not awaited)."""

    def queued_here(self, limit: Limit) -> int:
        """How many of this limiter's calls have joined the connection's queue and wait in it (for tests)."""
        return sum(len(queue) for (key, _lane), queue in self._local.items() if key == limit.key)

    async def aclose(self) -> None:
        """Stop renewing leases and close any connection the limiter holds."""
        if self._keeper is not None:
            self._keeper.cancel()


# The scripts' sources live in lua/ beside this module, read once at import. Keys (one hash slot, as a Redis Cluster
# needs for a script): 1 slots (token → lease expiry), 2 requests (member → time), 3 tokens ("token:n" → time),
# 4 waiters ("process:token" → lane rank and arrival), 5 processes (process → waiting lease expiry), 6 state
# (backoff_until, penalty); a script given fewer names its own. Time comes from the Redis server, so hosts agree.
LUA_DIR = Path(__file__).with_name("lua")


def lua(*parts: str) -> str:
    """A script's source: these files of lua/ joined in order (the clock, the pruning and `take` go first)."""
    return "".join((LUA_DIR / f"{part}.lua").read_text(encoding="utf-8") for part in parts)


ENTER_SCRIPT = lua("prelude", "prune", "take", "enter")
ACQUIRE_SCRIPT = lua("prelude", "prune", "take", "acquire")
ATTEMPT_SCRIPT = lua("prelude", "attempt")
RATE_LIMITED_SCRIPT = lua("prelude", "rate_limited")
RELEASE_SCRIPT = lua("release")
USED_SCRIPT = lua("used")
LEAVE_SCRIPT = lua("leave")
RENEW_SCRIPT = lua("prelude", "renew")
COUNT_SCRIPT = lua("prelude", "count")
TAKE_SHARED = 6  # take.lua's arguments shared by the calls of one script: the process and the connection's limits


@lru_cache(maxsize=1024)
def redis_keys(key: str) -> tuple[bytes, ...]:
    """A connection's keys, in the order the scripts number them (built and encoded once: every call needs them)."""
    # The braces keep every key in one hash slot.
    parts = ("slots", "requests", "tokens", "waiters", "processes", "state")
    return tuple(f"promptlab:limit:{{{key}}}:{part}".encode() for part in parts)


class RedisLimiter(Limiter):
    """The queue, slots and windows as sorted sets in Redis, shared by every worker process."""

    # Calls that start or end together on a connection go as one script (script_pipe.py): the scripts that take a
    # slot share the process and the connection's limits (take.lua), the one that frees it nothing.
    enter_script, acquire_script = Script(ENTER_SCRIPT, shared=TAKE_SHARED), Script(ACQUIRE_SCRIPT, shared=TAKE_SHARED)
    attempt_script, rate_limited_script = Script(ATTEMPT_SCRIPT), Script(RATE_LIMITED_SCRIPT)
    release_script, used_script, leave_script = (
        Script(RELEASE_SCRIPT, shared=0, one_reply=True),
        Script(USED_SCRIPT),
        Script(LEAVE_SCRIPT),
    )
    renew_script, count_script = Script(RENEW_SCRIPT), Script(COUNT_SCRIPT)

    def __init__(self, client: aioredis.Redis, **kwargs):
        super().__init__(**kwargs)
        self.client = client
        # Every script in order, those issued while a batch is on its way together as the next (script_pipe.py).
        self._pipe = ScriptPipe(client)
        self._lease_ms, self._window_ms = int(self.lease_s * 1000), int(self.window_s * 1000)

    async def _run(self, script: Script, keys: tuple[bytes, ...], *args: str | int):
        return await self._pipe.call(script, keys, *args)

    def _take_args(self, limit: Limit, token: str, tokens: int, lane: str) -> tuple[str | int, ...]:
        """take.lua's: the TAKE_SHARED arguments every call of the process on the connection has, then the call's."""
        limits = (limit.max_concurrency, limit.rpm, limit.tpm, self._lease_ms, self._window_ms)
        return (self.process, *limits, token, tokens, LANE_RANK[lane])

    def _wait_s(self, wait_ms: int) -> float | None:
        if wait_ms == 0:
            return None
        return self.poll_s if wait_ms < 0 else wait_ms / 1000

    async def _enter(
        self, limit: Limit, token: str, lane: str, tokens: int, *, ask: bool
    ) -> tuple[float | None, int, tuple[float, ...]]:
        args = self._take_args(limit, token, tokens, lane)
        reply = await self._run(self.enter_script, redis_keys(limit.key), *args, 1 if ask else 0)
        if reply == 0:  # taken
            return None, 0, ()
        wait_ms, ahead, order = reply
        return (self._wait_s(wait_ms) if ask else 0.0), ahead, (float(order),)

    async def _try_acquire(self, limit: Limit, token: str, tokens: int, lane: str) -> tuple[float | None, int]:
        args = self._take_args(limit, token, tokens, lane)
        wait_ms, ahead = await self._run(self.acquire_script, redis_keys(limit.key), *args)
        return self._wait_s(wait_ms), ahead

    async def _leave(self, limit: Limit, token: str) -> int:
        slots, _, _, waiters, _, _ = redis_keys(limit.key)
        return await self._run(self.leave_script, (waiters, slots), self.process, token)

    async def _attempt(self, limit: Limit, member: str) -> float | None:
        slots, requests, _, _, _, state = redis_keys(limit.key)
        wait_ms = await self._run(self.attempt_script, (slots, requests, state), member, limit.rpm, self._window_ms)
        return None if wait_ms == 0 else wait_ms / 1000

    async def _rate_limited(self, limit: Limit, delay_s: float) -> None:
        args = (int(delay_s * 1000), limit.max_concurrency, BACKOFF_MEMORY_S * 1000)
        await self._run(self.rate_limited_script, redis_keys(limit.key)[5:], *args)

    async def _used(self, limit: Limit, token: str, estimated: int, actual: int) -> None:
        await self._run(self.used_script, redis_keys(limit.key)[2:3], token, estimated, actual)

    async def _renew(self, key: str, tokens: list[str], *, waiting: bool) -> None:
        slots, _, _, waiters, processes, _ = redis_keys(key)
        waiter = self.process if waiting else ""
        await self._run(self.renew_script, (slots, waiters, processes), self._lease_ms, waiter, *tokens)

    async def _release(self, limit: Limit, token: str, successes: int) -> None:
        # Not awaited: this process's next take of the slot is run after it anyway, and the caller's place (under
        # --concurrency, say) goes to the next call at once.
        slots, _, _, _, _, state = redis_keys(limit.key)
        self._pipe.send(self.release_script, (slots, state), token, successes)

    async def flushed(self) -> None:
        await self._pipe.flushed()

    async def in_flight(self, limit: Limit) -> int:
        return await self._run(self.count_script, redis_keys(limit.key)[:1])

    async def aclose(self) -> None:
        await super().aclose()
        await self._pipe.flushed()
        await self.client.aclose()


@dataclass
class _Connection:
    """One connection's state in process memory (embedded mode). Requests and tokens are counted under the lock
    by one clock, so they are kept oldest first and pruning looks only at the oldest."""

    slots: dict[str, float] = field(default_factory=dict)  # token → lease expiry
    requests: deque[float] = field(default_factory=deque)  # start times in the window
    tokens: dict[str, tuple[float, int]] = field(default_factory=dict)  # token → (time, tokens)
    waiters: dict[str, tuple[int, float]] = field(default_factory=dict)  # token → (lane rank, arrival)
    backoff_until: float = 0.0
    penalty: int = 0


class LocalLimiter(Limiter):
    """The same rules in process memory, shared by the embedded worker's threads (each runs its own loop)."""

    _lock = threading.Lock()
    _connections: dict[str, _Connection] = defaultdict(_Connection)

    def _state(self, key: str, now: float) -> _Connection:
        """The connection's state without what has run out: a window that holds a minute of a batch run's requests
        is not copied on every call."""
        state = self._connections[key]
        if any(expires <= now for expires in state.slots.values()):
            state.slots = {token: expires for token, expires in state.slots.items() if expires > now}
        since = now - self.window_s
        while state.requests and state.requests[0] <= since:
            state.requests.popleft()
        while state.tokens:
            oldest = next(iter(state.tokens))
            if state.tokens[oldest][0] > since:
                break
            del state.tokens[oldest]
        return state

    def _ahead(self, state: _Connection, token: str) -> int:
        mine = state.waiters[token]
        return sum(1 for other in state.waiters.values() if other < mine)

    async def _enter(
        self, limit: Limit, token: str, lane: str, tokens: int, *, ask: bool
    ) -> tuple[float | None, int, tuple[float, ...]]:
        with self._lock:
            state = self._state(limit.key, time.monotonic())
            order = state.waiters[token] = (LANE_RANK[lane], time.monotonic())
            ahead = self._ahead(state, token)
        if not ask:
            return 0.0, ahead, order
        wait_s, ahead = await self._try_acquire(limit, token, tokens, lane)
        return wait_s, ahead, order

    async def _try_acquire(self, limit: Limit, token: str, tokens: int, lane: str) -> tuple[float | None, int]:
        with self._lock:
            now = time.monotonic()
            state = self._state(limit.key, now)
            ahead = self._ahead(state, token)
            if ahead >= max(1, limit.max_concurrency - state.penalty) - len(state.slots):
                return self.poll_s, ahead
            if state.backoff_until > now:
                return state.backoff_until - now, ahead
            if len(state.requests) >= limit.rpm:
                return state.requests[0] + self.window_s - now, ahead
            used = sum(spent for _, spent in state.tokens.values()) if limit.tpm else 0
            if used and used + tokens > limit.tpm:
                return next(iter(state.tokens.values()))[0] + self.window_s - now, ahead
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
            state.slots.pop(token, None)
            return ahead

    async def _attempt(self, limit: Limit, member: str) -> float | None:
        with self._lock:
            now = time.monotonic()
            state = self._state(limit.key, now)
            if state.backoff_until > now:
                return state.backoff_until - now
            if len(state.requests) >= limit.rpm:
                return state.requests[0] + self.window_s - now
            state.requests.append(now)
        return None

    async def _rate_limited(self, limit: Limit, delay_s: float) -> None:
        with self._lock:
            state = self._connections[limit.key]
            state.backoff_until = max(state.backoff_until, time.monotonic() + delay_s)
            allowed = max(1, limit.max_concurrency - state.penalty)
            state.penalty = limit.max_concurrency - max(1, math.floor(allowed / 2))

    async def _used(self, limit: Limit, token: str, estimated: int, actual: int) -> None:
        with self._lock:
            state = self._connections[limit.key]
            if token in state.tokens:
                state.tokens[token] = (state.tokens[token][0], actual)

    async def _renew(self, key: str, tokens: list[str], *, waiting: bool) -> None:
        """The slots only: one process's waiters never outlive it, so their place has no lease."""
        with self._lock:
            slots = self._connections[key].slots
            for token in tokens:
                if token in slots:
                    slots[token] = time.monotonic() + self.lease_s

    async def _release(self, limit: Limit, token: str, successes: int) -> None:
        with self._lock:
            state = self._connections[limit.key]
            state.slots.pop(token, None)
            state.penalty = max(0, state.penalty - successes)

    async def flushed(self) -> None:
        """Nothing to wait for: every change is made at once, in this process's memory."""

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
