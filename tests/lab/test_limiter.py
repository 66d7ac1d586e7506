"""Connection limits: at most max_concurrency at once and rpm a minute across workers; a dead holder's slot returns."""

import asyncio
import contextlib
import subprocess
import sys
import time
import uuid
from collections.abc import AsyncIterator

import pytest
import redis.asyncio as aioredis
from django.conf import settings
from redis.asyncio.connection import parse_url

from lab.engine.limiter import (
    BATCH,
    COUNT_SCRIPT,
    Limit,
    LocalLimiter,
    QueueDeadlineExceeded,
    RedisLimiter,
    Script,
)
from tests.fixtures.processes import ROOT


def limit(max_concurrency: int = 3, rpm: int = 10_000) -> Limit:
    return Limit(key=f"test-{uuid.uuid4().hex}", max_concurrency=max_concurrency, rpm=rpm)


class Workers:
    """Two limiters, as two workers would have: separate Redis connections, or the memory of one process."""

    def __init__(self, kind: str, **options):
        self.kind, self.options, self.limiters = kind, options, []

    async def __aenter__(self):
        if self.kind == "local":
            self.limiters = [LocalLimiter(**self.options), LocalLimiter(**self.options)]
        else:
            # A Redis call that hangs fails the test in seconds instead of stalling it (no limiter call blocks).
            clients = [
                aioredis.Redis.from_url(settings.REDIS_URL, socket_timeout=10, client_name=f"test-{uuid.uuid4().hex}")
                for _ in range(2)
            ]
            self.limiters = [RedisLimiter(client, **self.options) for client in clients]
        return self.limiters

    async def __aexit__(self, *exc):
        for limiter in self.limiters:
            await limiter.aclose()


kinds = pytest.mark.parametrize("kind", ["redis", "local"])


async def joined(limiters, shared: Limit, count: int) -> None:
    """Until `count` calls wait in the connection's queue: a task started is not yet a waiter that has arrived,
    and on a loaded machine a fixed pause does not make it one."""
    async with asyncio.timeout(5):
        while sum(limiter.queued_here(shared) for limiter in limiters) < count:
            await asyncio.sleep(0.005)


async def most_at_once(workers: list, shared: Limit, requests: int, hold_s: float) -> int:
    """Send `requests` through the two workers in turn, each holding its slot `hold_s`; the most in at once."""
    in_flight, most = 0, 0

    async def request(limiter):
        nonlocal in_flight, most
        async with limiter.slot(shared):
            in_flight += 1
            most = max(most, in_flight)
            await asyncio.sleep(hold_s)
            in_flight -= 1

    await asyncio.gather(*(request(workers[i % 2]) for i in range(requests)))
    return most


@kinds
async def test_it_never_lets_more_than_max_concurrency_in_across_two_workers(kind):
    shared = limit(max_concurrency=3)
    async with Workers(kind) as workers:
        assert await most_at_once(workers, shared, requests=16, hold_s=0.03) == 3
        assert await workers[0].in_flight(shared) == 0


@kinds
async def test_requests_per_minute_hold_back_the_request_over_the_limit_until_the_window_moves(kind):
    shared = limit(rpm=3)
    starts = []
    # A window long enough that a loaded machine's slow round trips cannot pass for waiting on it.
    async with Workers(kind, window_s=1.5) as (first, second):
        started = time.monotonic()
        for i in range(4):
            async with (first if i % 2 else second).slot(shared):
                starts.append(time.monotonic() - started)
    assert max(starts[:3]) < 0.75
    assert starts[3] >= 1.45


@kinds
async def test_a_waiter_that_gives_up_takes_no_slot(kind):
    shared = limit(max_concurrency=1)
    async with Workers(kind) as (first, second):
        async with first.slot(shared):
            with pytest.raises(TimeoutError):
                async with asyncio.timeout(0.1), second.slot(shared):
                    pass
            assert await first.in_flight(shared) == 1
        assert await first.in_flight(shared) == 0


@kinds
async def test_a_slot_held_longer_than_its_lease_is_renewed_and_stays_taken(kind):
    shared = limit(max_concurrency=1)
    async with Workers(kind, lease_s=0.3) as (first, second), first.slot(shared):
        await asyncio.sleep(0.8)
        with pytest.raises(TimeoutError):
            async with asyncio.timeout(0.2), second.slot(shared):
                pass


HOLDER = """
import asyncio, sys, redis.asyncio as aioredis
from lab.engine.limiter import Limit, RedisLimiter

async def hold():
    limiter = RedisLimiter(aioredis.Redis.from_url(sys.argv[1]), lease_s=1.0)
    async with limiter.slot(Limit(key=sys.argv[2], max_concurrency=1, rpm=1000)):
        print("holding", flush=True)
        await asyncio.sleep(60)

asyncio.run(hold())
"""


async def test_a_killed_workers_slot_comes_back_when_its_lease_runs_out():
    shared = limit(max_concurrency=1)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, settings.REDIS_URL, shared.key], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "holding"
        holder.kill()  # SIGKILL: no release, no more renewals
        holder.wait()
        async with Workers("redis") as (limiter, _):
            assert await limiter.in_flight(shared) == 1
            started = time.monotonic()
            async with asyncio.timeout(5), limiter.slot(shared) as slot:
                pass
        assert slot.waited_s > 0.1
        assert time.monotonic() - started < 2.5
    finally:
        holder.kill()


class Counting:
    """A limiter counting how often a waiter asks for a slot (again)."""

    asked = 0

    async def _try_acquire(self, *args):
        self.asked += 1
        return await super()._try_acquire(*args)


class CountingLimiter(Counting, LocalLimiter):
    pass


class CountingRedisLimiter(Counting, RedisLimiter):
    pass


async def test_waiters_queue_in_arrival_order_and_only_the_first_asks_for_a_slot():
    limiter, shared = CountingLimiter(poll_s=0.05), limit(max_concurrency=1)
    order = []

    async def request(n: int) -> None:
        async with limiter.slot(shared):
            order.append(n)

    async with limiter.slot(shared):  # the pool is full for 0.5 s while ten requests arrive
        waiters = []
        for n in range(10):
            waiters.append(asyncio.create_task(request(n)))
            await asyncio.sleep(0.001)
        await asyncio.sleep(0.5)
        asked_while_full = limiter.asked
    await asyncio.gather(*waiters)

    assert order == list(range(10))
    # Polled by the first waiter alone: about 0.5 s / 50 ms, not ten waiters' worth (about 100).
    assert asked_while_full <= 15


class CancelLosingLimiter(LocalLimiter):
    """Its request for a slot swallows a cancel that lands during it, as Python 3.11's asyncio.wait_for does (and
    redis-py sends every command through wait_for)."""

    async def _try_acquire(self, *args):
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.sleep(0.05)
        return await super()._try_acquire(*args)


async def test_a_waiter_whose_cancel_was_swallowed_on_the_way_still_stops_waiting():
    limiter, shared = CancelLosingLimiter(poll_s=0.05), limit(max_concurrency=1)

    async def wait_briefly() -> None:
        async with asyncio.timeout(0.12), limiter.slot(shared):
            pass

    async with limiter.slot(shared):  # full: the waiter below can only give up
        waiter = asyncio.create_task(wait_briefly())
        await asyncio.wait({waiter}, timeout=3)
        stuck = not waiter.done()
        waiter.cancel()
    assert not stuck, "the waiter went on polling after its timeout's cancel was swallowed"
    with pytest.raises(TimeoutError):
        waiter.result()
    assert limiter.queued_here(shared) == 0


@kinds
async def test_an_interactive_waiter_goes_before_the_batch_waiters_already_queued(kind):
    shared = limit(max_concurrency=1)
    order = []

    async def request(limiter, lane: str, name: str) -> None:
        async with limiter.slot(shared, lane=lane):
            order.append(name)

    async with Workers(kind) as (first, second):
        async with first.slot(shared):
            batch = []
            for n in range(6):  # they arrive one after the other, from either worker
                batch.append(asyncio.create_task(request(first if n % 2 else second, "batch", f"b{n}")))
                await joined((first, second), shared, n + 1)
            interactive = asyncio.create_task(request(second, "interactive", "i"))
            await joined((first, second), shared, 7)
        await asyncio.gather(*batch, interactive)
    assert order == ["i", "b0", "b1", "b2", "b3", "b4", "b5"]  # FIFO within the batch lane, across workers


@kinds
async def test_a_waiter_past_its_queue_deadline_says_how_many_were_ahead_and_takes_no_place(kind):
    shared = limit(max_concurrency=1)
    heard = []

    async def on_wait(ahead: int) -> None:
        heard.append(ahead)

    async with Workers(kind) as (first, second):
        async with first.slot(shared):
            ahead_of_it = asyncio.create_task(first.slot(shared).__aenter__())
            await joined((first,), shared, 1)
            with pytest.raises(QueueDeadlineExceeded) as excinfo:
                async with second.slot(shared, queue_deadline_s=0.3, on_wait=on_wait):
                    pass
            ahead_of_it.cancel()
        async with asyncio.timeout(1), second.slot(shared) as slot:  # nothing left queued in front
            assert slot.waited_s < 0.5
    assert excinfo.value.ahead == 1 and 0.25 <= excinfo.value.waited_s < 1
    assert heard == [1]


@kinds
async def test_every_attempt_of_a_call_takes_a_request_of_the_rpm_window(kind):
    shared = limit(rpm=3)
    async with Workers(kind, window_s=0.6) as (first, second):
        async with first.slot(shared) as slot:
            await slot.attempt()  # two retries: three requests in the window
            await slot.attempt()
        started = time.monotonic()
        async with second.slot(shared):
            waited = time.monotonic() - started
    assert waited >= 0.5


@kinds
async def test_a_tpm_budget_holds_back_the_call_that_would_exceed_it_and_usage_corrects_the_estimate(kind):
    shared = Limit(key=f"test-{uuid.uuid4().hex}", max_concurrency=10, rpm=10_000, tpm=100)
    async with (
        Workers(kind, window_s=0.6) as (first, second),
        first.slot(shared, tokens=40),
        second.slot(shared, tokens=40) as two,
    ):
        with pytest.raises(TimeoutError):  # 120 of 100 tokens: it waits
            async with asyncio.timeout(0.2), first.slot(shared, tokens=40):
                pass
        await two.used(10)  # the provider said the second used 10: 50 of 100 now
        async with asyncio.timeout(0.2), first.slot(shared, tokens=40):
            pass


@kinds
async def test_a_429_backs_the_whole_connection_off_for_every_worker_and_halves_its_concurrency(kind):
    shared = limit(max_concurrency=4)
    async with Workers(kind) as (first, second):
        async with first.slot(shared) as slot:
            await slot.rate_limited(0.4)
        started = time.monotonic()
        async with second.slot(shared):
            assert time.monotonic() - started >= 0.35  # the other worker waited out the back-off too
        # Halved to 2 after the 429; each success gives one back.
        assert await most_at_once([first, second], shared, requests=8, hold_s=0.05) <= 3


@kinds
async def test_each_success_gives_back_one_of_the_calls_a_429_took_away_once_its_slot_is_freed(kind):
    shared = limit(max_concurrency=4)
    async with Workers(kind) as (first, second):
        async with first.slot(shared) as slot:
            await slot.rate_limited(0.01)  # 2 at once now
        async with second.slot(shared) as slot:
            await slot.succeeded()  # 3 once this slot is freed
        assert await most_at_once([first, second], shared, requests=9, hold_s=0.05) == 3


class AnswerLost:
    """Its caller is cancelled after its slot was taken but before it heard so, as when a reply is lost."""

    async def _enter(self, *args, **kwargs):
        taken = await super()._enter(*args, **kwargs)
        await asyncio.sleep(10)
        return taken


class AnswerLostLocal(AnswerLost, LocalLimiter):
    pass


class AnswerLostRedis(AnswerLost, RedisLimiter):
    pass


@kinds
async def test_a_caller_cancelled_before_it_heard_its_slot_was_taken_leaves_the_slot_free(kind):
    shared = limit(max_concurrency=1)
    if kind == "local":
        lost = AnswerLostLocal()
    else:
        lost = AnswerLostRedis(aioredis.Redis.from_url(settings.REDIS_URL, socket_timeout=10))
    async with Workers(kind) as (other, _):
        try:
            with pytest.raises(TimeoutError):
                async with asyncio.timeout(0.2), lost.slot(shared):
                    pass
        finally:
            await lost.aclose()
        assert await other.in_flight(shared) == 0  # not taken until its lease runs out


@contextlib.asynccontextmanager
async def commands_sent(limiter: RedisLimiter) -> AsyncIterator[list[str]]:
    """The commands the limiter sends while the block runs, as the Redis server's MONITOR sees them (not those a
    script runs inside Redis: they cost the worker nothing). Its connections are told apart by their client name
    from those of anything else on the server, such as a worker another test left running."""
    watcher = aioredis.Redis.from_url(settings.REDIS_URL, socket_timeout=10)
    marker = aioredis.Redis.from_url(settings.REDIS_URL, socket_timeout=10)
    name = limiter.client.connection_pool.connection_kwargs["client_name"]
    end, seen, sent = f"ECHO end-{uuid.uuid4().hex}", [], []
    try:
        await marker.ping()  # connected before MONITOR starts, so its handshake is not counted
        async with watcher.monitor() as monitor:
            yield sent
            await marker.echo(end.split()[1])
            async with asyncio.timeout(10):
                while (command := await monitor.next_command())["command"] != end:
                    seen.append((f"{command['client_address']}:{command['client_port']}", command["command"]))
        mine = {client["addr"] for client in await marker.client_list() if client["name"] == name}
        sent.extend(command.split()[0].upper() for address, command in seen if address in mine)
    finally:
        await watcher.aclose()
        await marker.aclose()


async def test_a_call_that_goes_at_once_costs_two_redis_commands_and_renews_no_lease():
    shared = limit()
    async with Workers("redis") as (limiter, _):
        async with limiter.slot(shared):  # connected, its scripts loaded
            pass
        async with commands_sent(limiter) as sent:
            async with limiter.slot(shared, lane=BATCH) as slot:
                await asyncio.sleep(0.05)
                await slot.succeeded()
            await limiter.flushed()  # the free is sent without waiting for its answer
    # Joining the queue with the slot taken in one script; freeing it with its success counted in another.
    assert sent == ["EVALSHA", "EVALSHA"]


async def test_a_slot_freed_without_waiting_is_free_for_the_next_call_of_the_same_process():
    shared = limit(max_concurrency=1)
    client = aioredis.Redis.from_url(settings.REDIS_URL, socket_timeout=10)
    limiter = CountingRedisLimiter(client, poll_s=0.05)
    try:
        for _ in range(5):
            async with limiter.slot(shared):
                pass
        # Each take went after the free before it (in order, on one connection): none found the slot held.
        assert limiter.asked == 0
        await limiter.flushed()
        assert await limiter.in_flight(shared) == 0
    finally:
        await limiter.aclose()


class RoundTrips:
    """A relay on loopback between a client and Redis that counts round trips: the client's writes after each of
    the server's replies (a write TCP splits in two is still one)."""

    def __init__(self):
        self.count, self._answered = 0, True

    @contextlib.asynccontextmanager
    async def relay(self) -> AsyncIterator[str]:
        target = parse_url(settings.REDIS_URL)

        async def pump(reader, writer, from_client: bool) -> None:
            with contextlib.suppress(ConnectionError):
                while data := await reader.read(65536):
                    if from_client and self._answered:
                        self.count += 1
                    self._answered = not from_client
                    writer.write(data)
                    await writer.drain()
            writer.close()

        pumps: set[asyncio.Task] = set()

        async def serve(client_reader, client_writer) -> None:
            server_reader, server_writer = await asyncio.open_connection(target["host"], target["port"])
            for task in (pump(client_reader, server_writer, True), pump(server_reader, client_writer, False)):
                pumps.add(asyncio.create_task(task))

        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        try:
            yield f"redis://127.0.0.1:{port}/{target.get('db', 0)}"
        finally:
            server.close()
            for task in pumps:
                task.cancel()
            await asyncio.gather(*pumps, return_exceptions=True)


async def test_a_freed_slot_and_the_ask_of_the_call_waiting_for_its_place_share_one_round_trip():
    """As the engine runs calls under --concurrency: a call's place is freed after its slot, and the call it wakes
    asks for a slot at once. The release is not awaited; were it sent alone, that ask would wait for its reply."""
    shared, trips = limit(max_concurrency=1), RoundTrips()
    async with trips.relay() as url:
        limiter = RedisLimiter(aioredis.Redis.from_url(url, socket_timeout=10))
        places, order = asyncio.Semaphore(1), []

        async def call(n: int, hold: asyncio.Event | None = None) -> None:
            async with places, limiter.slot(shared, lane=BATCH):
                order.append(n)
                if hold:
                    await hold.wait()

        try:
            async with limiter.slot(shared):  # connected, its scripts loaded
                pass
            await limiter.flushed()
            hold = asyncio.Event()
            first = asyncio.create_task(call(1, hold))
            while not order:
                await asyncio.sleep(0.005)
            second = asyncio.create_task(call(2))  # waits for the first's place
            await asyncio.sleep(0.05)
            before = trips.count
            hold.set()
            await asyncio.gather(first, second)
            await limiter.flushed()
            assert order == [1, 2]
            assert trips.count - before == 2  # the release and the take together; the second's release
        finally:
            await limiter.aclose()


async def test_the_slots_a_worker_holds_are_renewed_in_one_redis_command_a_round():
    shared, lease_s = limit(max_concurrency=10), 0.3
    async with Workers("redis", lease_s=lease_s) as (limiter, other), contextlib.AsyncExitStack() as holding:
        for _ in range(10):
            await holding.enter_async_context(limiter.slot(shared))
        await asyncio.sleep(lease_s / 2)  # a first round has loaded the script
        started = time.monotonic()
        async with commands_sent(limiter) as sent:
            await asyncio.sleep(2 * lease_s)
        rounds = (time.monotonic() - started) / (lease_s / 3)
        assert await other.in_flight(shared) == 10  # held past their lease: renewed
    # One a round, not one a slot (ten a round); a round may load the script again if another client flushed them.
    assert 1 <= sent.count("EVALSHA") <= rounds + 2, (sent, rounds)
    assert set(sent) <= {"EVALSHA", "SCRIPT"}, sent


async def test_a_script_the_redis_server_does_not_know_is_loaded_and_run():
    shared = limit()
    async with Workers("redis") as (limiter, _):
        # A source no server has seen (a restart or SCRIPT FLUSH loses them all), for this limiter alone.
        limiter.count_script = Script(f"-- {uuid.uuid4().hex}\n{COUNT_SCRIPT}")
        async with limiter.slot(shared):
            assert await limiter.in_flight(shared) == 1


async def test_calls_that_start_together_take_their_slots_in_one_command_and_free_them_in_another():
    """A wave of calls on one connection (an experiment at its limit) costs Redis two commands, not two a call."""
    shared = limit(max_concurrency=20)
    async with Workers("redis") as (limiter, other):
        async with limiter.slot(shared):  # connected, its scripts loaded
            pass
        await limiter.flushed()

        async def call() -> None:
            async with limiter.slot(shared, lane=BATCH) as slot:
                await asyncio.sleep(0.05)
                await slot.succeeded()

        async with commands_sent(limiter) as sent:
            await asyncio.gather(*(call() for _ in range(20)))
            await limiter.flushed()
        assert await other.in_flight(shared) == 0  # every slot freed
    assert sent.count("EVALSHA") <= 4, sent  # two, unless a wave is split between loop turns; forty one by one


async def test_calls_starting_together_beyond_the_limit_wait_and_take_the_slots_freed_in_order():
    shared = limit(max_concurrency=3)
    async with Workers("redis", poll_s=0.05) as (limiter, _):
        order, in_flight, most = [], 0, 0

        async def call(n: int) -> None:
            nonlocal in_flight, most
            async with limiter.slot(shared, lane=BATCH):
                in_flight += 1
                most = max(most, in_flight)
                order.append(n)
                await asyncio.sleep(0.05)
                in_flight -= 1

        await asyncio.gather(*(call(n) for n in range(9)))
    assert most == 3
    assert sorted(order[:3]) == [0, 1, 2] and sorted(order) == list(range(9))
