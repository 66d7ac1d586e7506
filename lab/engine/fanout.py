"""Run many answers at once in one event loop: staggered starts, connection scheduling, a timeout each, cancel.

The engine knows nothing of rounds or outputs: the caller hands it `Call`s and `Hooks` (where deltas and
finished answers go, and whether the run was cancelled). One call's failure never stops the others, and the
results come back in the order of the calls. A call first waits for its connection's turn (limiter.py), at most
its queue deadline, and only then is its request sent and its timeout started. A caller running many rounds at
once (the experiment command) may hold its calls back in `CallWindows` before that: each connection's
`max_concurrency` at once, and at most its own bound in all. A call with `spending` (a budget
cap) is sent only once its spending reserves it, and settles it when done.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections import Counter
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager, nullcontext
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from typing import Protocol

import httpx

from ..providers.answer import ERROR, Answer, complete_answer, stream_answer
from ..providers.base import ChatRequest, ConnectionConfig, ModelInfo
from ..providers.http import HttpAdapter, attempt_gate, tls_context
from ..providers.message_rules import estimate_input_tokens
from ..providers.registry import get_adapter
from .deltas import COALESCE_S, Delta, DeltaBatcher
from .limiter import Limit, Limiter, QueueDeadlineExceeded
from .queue_deadlines import waited_message

logger = logging.getLogger(__name__)

TIMEOUT, CANCELLED = "timeout", "cancelled"
CANCEL_POLL_S = 0.5
# An answer's budget from sending its request, the default every comparison, experiment and form starts from
# (compare.models.DEFAULT_TIMEOUT_MS reads it): reasoning models often think for over a minute before answering.
DEFAULT_TIMEOUT_S = 120.0


@dataclass(frozen=True)
class Call:
    key: int  # the caller's id for this answer
    config: ConnectionConfig
    request: ChatRequest
    model_info: ModelInfo | None = None
    start_after_s: float = 0.0
    timeout_s: float = DEFAULT_TIMEOUT_S  # from when the request is sent: the wait for a turn is not part of it
    lane: str = "interactive"  # interactive calls go before batch calls queued on the same connection
    queue_deadline_s: float = 60.0  # how long it may wait for its connection's turn
    # False: nobody watches its tokens, so it is asked in one request and parsed once (see `_answer`).
    stream: bool = True
    spending: Spending | None = None  # a cap on what the calls cost (an experiment's budget); None: no cap


class Spending(Protocol):
    """A cap on what calls cost, held call by call (compare.experiments.budget is the one there is)."""

    async def reserve(self, call: Call) -> str | None:
        """Reserve the call's worst case, waiting if need be; None when reserved, else why it is not to be made."""

    async def settle(self, call: Call, answer: Answer) -> None:
        """Replace the call's reservation by what it cost."""


@dataclass
class Result:
    key: int
    answer: Answer
    started_at: datetime | None = None  # when the call began, after its stagger
    # From then until its request was sent: the wait for a slot (the connection's, or the caller's bound), never
    # part of the answer's ttft or latency. None when it never began (cancelled during its stagger).
    queued_ms: int | None = None


class Hooks(Protocol):
    async def deltas(self, batch: list[Delta]) -> None: ...

    async def done(self, result: Result) -> None: ...

    async def cancelled(self) -> bool: ...

    async def waiting(self, key: int, connection: str, ahead: int) -> None:
        """The call `key` waits for its connection's turn, with `ahead` calls before it."""

    async def sending(self, key: int) -> None:
        """The call `key` has its connection's turn: its request goes now, and its timeout starts."""


def limit_for(config: ConnectionConfig) -> Limit:
    return Limit(
        key=f"connection-{config.connection_id or config.name}",
        max_concurrency=config.max_concurrency,
        rpm=config.rpm,
        tpm=config.tpm,
        name=config.name,
    )


def rounds_to_fill(calls: Sequence[Call]) -> int:
    """How many runs of these calls at once fill every connection they use to its `max_concurrency` (one at least):
    a batch worker claims that many rounds ahead of their connections (lab.engine.admission.place_ahead)."""
    per_connection = Counter(limit_for(call.config).key for call in calls)
    limits = {limit_for(call.config).key: call.config.max_concurrency for call in calls}
    return max((math.ceil(limits[key] / count) for key, count in per_connection.items()), default=1)


class CallWindows:
    """Where one caller's calls (an experiment run's, shared by its rounds) wait before they ask their connection
    for a turn: at most that connection's `max_concurrency` of them at once (its window, made at its first call),
    and at most `total` in all (the command's --concurrency; None: no bound of its own). When `shares` processes
    share the run, this one (`share`, from 0) takes its part of each limit: a call beyond it would wait in the
    connection's queue for slots the others free, which a process notices only by polling (limiter.POLL_S).

    A caller that claims rounds ahead of its calls keeps the calls beyond a connection's limit here rather than in
    the connection's queue: there, only the first of a process's waiters asks for a slot and the next asks once it
    has one, so a wave of answers ending together was followed by one Redis round trip per freed slot in turn;
    from here every call whose place frees goes to the scheduler at once, and their asks share round trips.

    A caller that holds rounds for several connections may claim more of them when one connection runs short of
    calls while another's are waiting (`short`): the rounds it holds may all be waiting for a slower connection's
    calls while a faster one runs out of its own. It says which calls are coming (`expect`, when it claims their
    rounds), sees how long the last call waiting in a window has to wait (`backlog_s`), and is told (`on_free`)
    whenever a place frees in a window with less than its size of calls waiting or coming, and (`on_wait`) whenever
    a call starts waiting because every place of its window is taken."""

    def __init__(self, total: int | None = None, *, share: int = 0, shares: int = 1):
        self.total = asyncio.Semaphore(total) if total else None
        self.share, self.shares = share, shares
        self.connections: dict[str, _Window] = {}
        self.on_free: Callable[[], None] | None = None
        self.on_wait: Callable[[], None] | None = None

    @asynccontextmanager
    async def hold(self, call: Call) -> AsyncIterator[None]:
        # Its connection's window first: a call waiting there holds no place that another connection's call could use.
        async with self._window(call).place(self.on_free, self.on_wait), self.total or nullcontext():
            yield

    def waiting(self) -> int:
        """Calls waiting for a place in their connection's window (every place of it taken)."""
        return sum(window.waiting for window in self.connections.values())

    def expect(self, calls: Sequence[Call]) -> None:
        """These calls will come (their rounds are claimed): they count as waiting until they do."""
        for call in calls:
            self._window(call).coming += 1

    def short(self) -> bool:
        """Whether a connection has less than its places' worth of calls waiting or coming while another has at
        least its places' worth (the rounds held wait for that one)."""
        shorts = [window.short for window in self.connections.values()]
        return any(shorts) and not all(shorts)

    def backlog_s(self) -> float:
        """About how long the last call waiting (or coming) in a window has to wait for its place: the calls ahead
        ÷ its places × the mean time a call holds one (infinite while calls wait where none has ended yet)."""
        return max((window.backlog_s for window in self.connections.values()), default=0.0)

    def _window(self, call: Call) -> _Window:
        key = limit_for(call.config).key
        window = self.connections.get(key)
        if window is None:
            limit = call.config.max_concurrency
            window = self.connections[key] = _Window(max(1, limit // self.shares + (self.share < limit % self.shares)))
        return window


class _Window:
    """One connection's places in a `CallWindows`: the calls waiting for one (or said to be coming), and how long
    a call holds one."""

    HELD_WEIGHT = 1 / 8  # of the latest call in the mean time a call holds a place (a moving average)

    def __init__(self, size: int):
        self.places, self.size = asyncio.Semaphore(size), size
        self.waiting = self.coming = 0
        self.held_s: float | None = None

    @property
    def ahead(self) -> int:
        return self.waiting + self.coming

    @property
    def short(self) -> bool:
        return self.ahead < self.size

    @property
    def backlog_s(self) -> float:
        if not self.ahead:
            return 0.0
        if self.held_s is None:
            return math.inf
        return math.ceil(self.ahead / self.size) * self.held_s

    @asynccontextmanager
    async def place(
        self, on_free: Callable[[], None] | None, on_wait: Callable[[], None] | None = None
    ) -> AsyncIterator[None]:
        self.coming = max(0, self.coming - 1)
        self.waiting += 1
        if on_wait is not None and self.places.locked():
            on_wait()
        try:
            await self.places.acquire()
        finally:
            self.waiting -= 1
        began = time.monotonic()
        try:
            yield
        finally:
            self.places.release()
            held = time.monotonic() - began
            self.held_s = held if self.held_s is None else self.held_s + (held - self.held_s) * self.HELD_WEIGHT
            if on_free is not None and self.short:
                on_free()


# What a call counts against tpm before the provider says: its input, and its max_tokens or this much output.
EXPECTED_OUTPUT_TOKENS = 512


def expected_tokens(request: ChatRequest) -> int:
    return estimate_input_tokens(request.messages) + int(request.params.get("max_tokens") or EXPECTED_OUTPUT_TOKENS)


async def fan_out(
    calls: Sequence[Call],
    hooks: Hooks,
    *,
    limiter: Limiter,
    client: httpx.AsyncClient | None = None,
    cancel_poll_s: float = CANCEL_POLL_S,
    coalesce_s: float = COALESCE_S,
    windows: CallWindows | None = None,
) -> list[Result]:
    """Run every call; each result is handed to `hooks.done` as it finishes and all are returned in order.

    `client` is the process's long-lived HTTP client (see `runtime`), whose open connections to the providers
    every round reuses; without one, the run opens its own and closes it at the end. `windows`, shared by the runs
    of one caller, bound how many of their calls wait for a slot or stream at once (see `CallWindows`); the
    connections' own limits apply either way."""
    run = _Run(
        hooks=hooks,
        limiter=limiter,
        deltas=DeltaBatcher(hooks.deltas, interval_s=coalesce_s),
        windows=windows,
    )
    async with AsyncExitStack() as stack:
        run.client = client or await stack.enter_async_context(
            # The shared TLS context: building one per run would block the loop for tens of milliseconds.
            httpx.AsyncClient(timeout=httpx.Timeout(60.0, connect=10.0), verify=tls_context())
        )
        tasks = [asyncio.create_task(_run_call(call, run)) for call in calls]
        watcher = asyncio.create_task(_watch_for_cancel(run, tasks, cancel_poll_s))
        try:
            return list(await asyncio.gather(*tasks))
        finally:
            watcher.cancel()
            await run.deltas.close()


@dataclass
class _Run:
    hooks: Hooks
    limiter: Limiter
    deltas: DeltaBatcher
    client: httpx.AsyncClient | None = None
    windows: CallWindows | None = None
    cancelled: asyncio.Event = field(default_factory=asyncio.Event)
    # Calls still streaming: only these are cancelled, never one that is already recording its result.
    streaming: set[asyncio.Task] = field(default_factory=set)


async def _run_call(call: Call, run: _Run) -> Result:
    answer = Answer(status=ERROR)
    result = Result(key=call.key, answer=answer)
    limit = limit_for(call.config)
    reserved = False
    task = asyncio.current_task()
    run.streaming.add(task)
    try:
        await asyncio.sleep(call.start_after_s)
        result.started_at, waiting_since = datetime.now(tz=UTC), time.monotonic()
        async with run.windows.hold(call) if run.windows else nullcontext():
            # The budget before the connection's turn: a call waiting for room in the budget holds no slot.
            refusal = await call.spending.reserve(call) if call.spending is not None else None
            if refusal:
                answer.status, answer.error = CANCELLED, refusal
            else:
                reserved = call.spending is not None
                await _send(call, run, result, limit, waiting_since)
    except QueueDeadlineExceeded as exc:
        answer.status = TIMEOUT
        answer.error = waited_message(waited_s=exc.waited_s, connection=call.config.name, ahead=exc.ahead)
    except TimeoutError:
        answer.status, answer.error = TIMEOUT, _timeout_message(call, answer)
    except asyncio.CancelledError:
        if not run.cancelled.is_set():
            raise
        task.uncancel()
        answer.status = CANCELLED
        answer.error = "Cancelled" + ("; the partial answer is kept." if answer.text else " before it started.")
    except Exception as exc:
        logger.exception("Call %s failed unexpectedly", call.key)
        answer.status, answer.error = ERROR, f"Unexpected error: {type(exc).__name__}: {exc}"
    finally:
        run.streaming.discard(task)
        if result.started_at is not None and result.queued_ms is None:  # it waited until it gave up or was stopped
            result.queued_ms = _ms_since(waiting_since)
    if reserved:
        try:
            await call.spending.settle(call, answer)
        except Exception:
            # The reservation stays: the budget then counts the call at its worst case, never at less.
            logger.exception("Could not settle the budget of call %s", call.key)
    await run.deltas.flush()
    try:
        await run.hooks.done(result)
    except Exception:
        # The row stays unfinished; the sweeper fails it at the deadline, so nothing is lost silently.
        logger.exception("Could not record the result of call %s", call.key)
    return result


async def _send(call: Call, run: _Run, result: Result, limit: Limit, waiting_since: float) -> None:
    """The connection's turn, then the request, within the call's timeout. Every wait from the column's start until
    the request (for room in the budget, a place among the run's calls, the connection's slot) is its `queued_ms`."""
    answer = result.answer
    tokens = expected_tokens(call.request) if limit.tpm else 0
    on_wait = partial(run.hooks.waiting, call.key, call.config.name)
    async with run.limiter.slot(
        limit, lane=call.lane, tokens=tokens, queue_deadline_s=call.queue_deadline_s, on_wait=on_wait
    ) as slot:
        result.queued_ms = _ms_since(waiting_since)
        adapter = get_adapter(call.config, client=run.client)
        on_delta = partial(run.deltas.add, call.key)
        # Hooks that show tool calls as they arrive (a comparison's round) say so with a `tool_call` method.
        hook = getattr(run.hooks, "tool_call", None)
        on_tool_call = partial(_tool_call, run, hook, call.key) if hook is not None else None
        await run.hooks.sending(call.key)
        gate = attempt_gate.set(slot)  # every retry of this call takes an rpm token; a 429 slows the connection
        try:
            async with asyncio.timeout(call.timeout_s):  # from the request on: the wait above is not part of it
                await _answer(call, adapter, on_delta, answer, on_tool_call)
        finally:
            attempt_gate.reset(gate)
        if limit.tpm and answer.input_tokens is not None and answer.output_tokens is not None:
            await slot.used(answer.input_tokens + answer.output_tokens)


async def _tool_call(run: _Run, hook, key: int, index: int, call: dict) -> None:
    await run.deltas.flush()  # the text before a call reaches the page before it
    await hook(key, index, call)


async def _answer(call: Call, adapter, on_delta, answer: Answer, on_tool_call=None) -> None:
    """Streamed, delta by delta, unless the caller said nobody watches: then one request and one JSON body to
    parse, much less work than a server-sent event per token. The simulated provider has no wire to save and
    streams either way (its mid-answer failure keeps the partial text)."""
    if call.stream or not isinstance(adapter, HttpAdapter):
        await stream_answer(
            adapter,
            call.request,
            model_info=call.model_info,
            on_delta=on_delta,
            answer=answer,
            on_tool_call=on_tool_call,
        )
    else:
        await complete_answer(adapter, call.request, model_info=call.model_info, answer=answer)


def _ms_since(monotonic_start: float) -> int:
    return int((time.monotonic() - monotonic_start) * 1000)


def _timeout_message(call: Call, answer: Answer) -> str:
    message = f"No complete answer within {call.timeout_s:g} s of sending the request"
    return message + ("; the partial answer is kept." if answer.text else ".")


async def _watch_for_cancel(run: _Run, tasks: list[asyncio.Task], poll_s: float) -> None:
    while not all(task.done() for task in tasks):
        await asyncio.sleep(poll_s)
        try:
            if not await run.hooks.cancelled():
                continue
        except Exception:
            logger.warning("Could not check for cancellation", exc_info=True)
            continue
        run.cancelled.set()
        for task in run.streaming:
            task.cancel()
        return
