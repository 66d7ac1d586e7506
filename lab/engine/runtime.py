"""One event loop per process for the engine, in a thread of its own, with the connections it keeps open.

Why: run with `asyncio.run`, every round paid for a new event loop, a new HTTP client (and new TCP and TLS
handshakes with the provider), a new Redis connection for the limiter and another for the channel layer, and a
worker process could only stream one round at a time. Here a Celery task (on a worker thread, or on a prefork
child's main thread) hands its coroutine to the process's loop and waits for it — or, for batch work, hands it
over and returns (admission.py); any number of rounds stream side by side on one loop and share its HTTP
connection pool and Redis connections.

A forked child never uses its parent's loop: the runtime is made again, lazily, in each process.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import threading
from collections.abc import Callable, Coroutine
from functools import partial
from typing import Any, TypeVar

import httpx
from django import db
from django.conf import settings

from .admission import BatchAdmission
from .http_shards import ShardedTransport
from .limiter import Limiter, make_limiter

T = TypeVar("T")


class RunTimedOut(Exception):
    """The coroutine did not finish within the time the caller gave it (it has been cancelled)."""


# Enough for every answer of many rounds at once; the per-connection limits, not this pool, decide how many
# requests a provider sees. Spread over small pools (http_shards.py).
HTTP_MAX_CONNECTIONS = 500
HTTP_KEEPALIVE_S = 30
# A judge's reply may take up to two minutes; rounds bound each answer with their own, shorter timeouts.
HTTP_TIMEOUT = httpx.Timeout(120.0, connect=10.0)


class Runtime:
    """The loop thread and what lives on it: the HTTP client, the connection limiter and the batch jobs in flight."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name="engine-loop", daemon=True)
        self._thread.start()
        # Made on the loop: both bind their connections to the loop that first uses them.
        self.client, self.limiter = self.run(self._open())
        self.batch = BatchAdmission(self.loop, batch_jobs_per_process())
        # Threads of the engine's own for batch jobs whose code is synchronous (an evaluation waits on this loop
        # for its judge): never asyncio's default executor, whose few threads the HTTP client needs to resolve
        # names — jobs filling it would wait on calls that wait on them. Each may hold a database connection.
        self.job_threads = concurrent.futures.ThreadPoolExecutor(
            max_workers=job_threads(), thread_name_prefix="engine-job"
        )
        # The database thread of batch rounds (asgiref's thread-sensitive calls, see execution.round_run): their
        # many small writes never queue before an interactive round's, which keep asgiref's default thread.
        self.batch_database = concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="engine-batch-db")

    async def _open(self) -> tuple[httpx.AsyncClient, Limiter]:
        # The transport's pools share the process's TLS context; a client given a transport takes no proxy from the
        # environment, so nothing else of it needs one.
        transport = ShardedTransport(max_connections=HTTP_MAX_CONNECTIONS, keepalive_expiry=HTTP_KEEPALIVE_S)
        client = httpx.AsyncClient(timeout=HTTP_TIMEOUT, transport=transport)
        return client, make_limiter()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float | None = None) -> T:
        """Run `coro` on the loop and wait for it. If the wait ends early (a timeout, the worker's soft time limit
        raised in this thread, Ctrl-C), the coroutine is cancelled before the exception goes on."""
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            if future.done():  # it finished just now, or raised a TimeoutError of its own
                return future.result()
            future.cancel()
            raise RunTimedOut(f"Still running after {timeout:g} s.") from None
        except BaseException:
            future.cancel()
            raise

    def submit(self, coro: Coroutine[Any, Any, T]) -> concurrent.futures.Future[T]:
        """Start `coro` on the loop without waiting for it (the caller may wait on the future in steps)."""
        return asyncio.run_coroutine_threadsafe(coro, self.loop)

    async def in_thread(self, function: Callable[..., T], /, **kwargs: Any) -> T:
        """Run synchronous job code on one of the engine's job threads, its database connection closed after."""
        return await self.loop.run_in_executor(self.job_threads, partial(_closing_connections, function, **kwargs))

    def close(self) -> None:
        """Close the connections and stop the loop (tests; a worker simply exits)."""
        self.run(self._close(), timeout=10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(timeout=10)
        self.job_threads.shutdown(wait=False, cancel_futures=True)
        self.batch_database.shutdown(wait=False, cancel_futures=True)

    async def _close(self) -> None:
        await self.client.aclose()
        await self.limiter.aclose()

    def in_loop(self) -> bool:
        return threading.current_thread() is self._thread


def batch_jobs_per_process(worker_threads: int | None = None) -> int:
    """The batch cap: SCHEDULER_BATCH_JOBS_PER_PROCESS, or (0) as many as the worker has task threads."""
    return settings.SCHEDULER_BATCH_JOBS_PER_PROCESS or worker_threads or settings.CELERY["worker_concurrency"]


def job_threads() -> int:
    """As many as the batch cap, but no more than the database pool serves beside the process's other connections
    (the engine's database thread and a task thread or two); SQLite has no pool."""
    wanted = batch_jobs_per_process()
    pool = settings.DATABASES["default"].get("OPTIONS", {}).get("pool")
    if not isinstance(pool, dict) or "max_size" not in pool:
        return max(1, min(wanted, 4))
    return max(1, min(wanted, pool["max_size"] - OTHER_CONNECTIONS))


OTHER_CONNECTIONS = 3


def _closing_connections(function: Callable[..., T], /, **kwargs: Any) -> T:
    try:
        return function(**kwargs)
    finally:
        db.connections.close_all()  # this thread's: back to the pool while the thread waits for the next job


_lock = threading.Lock()
_runtime: Runtime | None = None
_pid: int | None = None


def runtime() -> Runtime:
    """This process's runtime, started on first use."""
    global _runtime, _pid
    with _lock:
        if _runtime is None or _pid != os.getpid():
            _runtime, _pid = Runtime(), os.getpid()
        return _runtime


def started() -> Runtime | None:
    """This process's runtime if something has started it, else None (never starts one)."""
    return _runtime if _pid == os.getpid() else None
