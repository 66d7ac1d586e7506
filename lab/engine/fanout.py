"""Run many answers at once in one event loop: staggered starts, a timeout each, connection limits, cancel.

The engine knows nothing of rounds or outputs: the caller hands it `Call`s and `Hooks` (where deltas and
finished answers go, and whether the run was cancelled). One call's failure never stops the others, and the
results come back in the order of the calls.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Sequence
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from typing import Protocol

import httpx

from ..providers.answer import ERROR, Answer, stream_answer
from ..providers.base import ChatRequest, ConnectionConfig, ModelInfo
from ..providers.http import tls_context
from ..providers.registry import get_adapter
from .deltas import COALESCE_S, Delta, DeltaBatcher
from .limiter import Limit, Limiter

logger = logging.getLogger(__name__)

TIMEOUT, CANCELLED = "timeout", "cancelled"
CANCEL_POLL_S = 0.5


@dataclass(frozen=True)
class Call:
    key: int  # the caller's id for this answer
    config: ConnectionConfig
    request: ChatRequest
    model_info: ModelInfo | None = None
    start_after_s: float = 0.0
    timeout_s: float = 10.0


@dataclass
class Result:
    key: int
    answer: Answer
    started_at: datetime | None = None  # when the call began, after its stagger


class Hooks(Protocol):
    async def deltas(self, batch: list[Delta]) -> None: ...

    async def done(self, result: Result) -> None: ...

    async def cancelled(self) -> bool: ...


def limit_for(config: ConnectionConfig) -> Limit:
    return Limit(
        key=f"connection-{config.connection_id or config.name}",
        max_concurrency=config.max_concurrency,
        rpm=config.rpm,
    )


async def fan_out(
    calls: Sequence[Call],
    hooks: Hooks,
    *,
    limiter: Limiter,
    client: httpx.AsyncClient | None = None,
    cancel_poll_s: float = CANCEL_POLL_S,
    coalesce_s: float = COALESCE_S,
) -> list[Result]:
    """Run every call; each result is handed to `hooks.done` as it finishes and all are returned in order.

    `client` is the process's long-lived HTTP client (see `runtime`), whose open connections to the providers
    every round reuses; without one, the run opens its own and closes it at the end."""
    run = _Run(hooks=hooks, limiter=limiter, deltas=DeltaBatcher(hooks.deltas, interval_s=coalesce_s))
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
    cancelled: asyncio.Event = field(default_factory=asyncio.Event)
    # Calls still streaming: only these are cancelled, never one that is already recording its result.
    streaming: set[asyncio.Task] = field(default_factory=set)


async def _run_call(call: Call, run: _Run) -> Result:
    answer = Answer(status=ERROR)
    result = Result(key=call.key, answer=answer)
    limit = limit_for(call.config)
    waiting_since = slot_at = None
    task = asyncio.current_task()
    run.streaming.add(task)
    try:
        await asyncio.sleep(call.start_after_s)
        result.started_at = datetime.now(tz=UTC)
        waiting_since = time.monotonic()
        async with asyncio.timeout(call.timeout_s), run.limiter.slot(limit):
            slot_at = time.monotonic()
            adapter = get_adapter(call.config, client=run.client)
            on_delta = partial(run.deltas.add, call.key)
            await stream_answer(adapter, call.request, model_info=call.model_info, on_delta=on_delta, answer=answer)
    except TimeoutError:
        waited_s = (slot_at or time.monotonic()) - (waiting_since or time.monotonic())
        answer.status, answer.error = TIMEOUT, _timeout_message(call, limit, answer, waited_s)
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
    await run.deltas.flush()
    try:
        await run.hooks.done(result)
    except Exception:
        # The row stays unfinished; the sweeper fails it at the deadline, so nothing is lost silently.
        logger.exception("Could not record the result of call %s", call.key)
    return result


def _timeout_message(call: Call, limit: Limit, answer: Answer, waited_s: float) -> str:
    message = f"No complete answer within {call.timeout_s:g} s"
    if waited_s >= 0.5:
        message += (
            f" ({waited_s:.1f} s of it waiting for a free slot on connection '{call.config.name}', "
            f"which allows {limit.max_concurrency} at a time and {limit.rpm} a minute)"
        )
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
