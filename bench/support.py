"""What the benchmarks share: a free loopback port, the fake LLM server in a process of its own (plain, or logging
each request's span), a Postgres database of their own (with a workspace and one
connection to the fake server, for the database benchmarks), and a process tree's CPU and memory read from /proc."""

import asyncio
import contextlib
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
import redis

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def start_fake_server() -> tuple[subprocess.Popen, str]:
    """The fake LLM server on a free 127.0.0.1 port; returns the process and its base URL (without /v1)."""
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "lab.fake_llm", "--port", str(port)], cwd=ROOT, stdout=subprocess.PIPE, text=True
    )
    server.stdout.readline()  # the "serving on" line
    return server, f"http://127.0.0.1:{port}"


# --- What the CLI benchmarks add: a fake server that logs each answer's span, a database of their own, and the
# CPU and memory of a process tree read from /proc.

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def start_logged_fake_server() -> tuple[subprocess.Popen, str]:
    """The fake LLM server with a request log (see `LoggedFakeServer`) on a free 127.0.0.1 port, in its own
    process; returns the process and its base URL (without /v1)."""
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, str(Path(__file__).resolve()), "--port", str(port)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    server.stdout.readline()  # the "serving on" line
    return server, f"http://127.0.0.1:{port}"


def load_average() -> str:
    return ", ".join(f"{x:.2f}" for x in os.getloadavg())


class Database:
    """A database of the benchmark's own beside the server's others, dropped on exit."""

    def __init__(self, base_url: str, name: str):
        parts = urlsplit(base_url)
        self.admin_url = urlunsplit(parts._replace(path="/postgres"))
        self.url = urlunsplit(parts._replace(path=f"/{name}"))
        self.name = name

    def _admin(self, sql: str) -> str:
        with psycopg.connect(self.admin_url, autocommit=True) as conn:
            cursor = conn.execute(sql)
            return cursor.fetchone()[0] if cursor.description else ""

    def version(self) -> str:
        return self._admin("SHOW server_version")

    def create(self) -> None:
        self.drop()
        self._admin(f'CREATE DATABASE "{self.name}"')

    def drop(self) -> None:
        self._admin(f'DROP DATABASE IF EXISTS "{self.name}" WITH (FORCE)')


def add_service_arguments(parser, *, database: str, redis_db: int) -> None:
    """--database-url, --database and --redis-url, for a benchmark that makes its own database (see `own_services`)."""
    parser.add_argument(
        "--database-url",
        default=os.environ.get("BENCH_DATABASE_URL", "postgres://postgres@127.0.0.1:5432/"),
        help="server to create the benchmark's database on",
    )
    parser.add_argument("--database", default=database, help="dropped and recreated, dropped at the end")
    parser.add_argument("--redis-url", default=f"redis://127.0.0.1:6379/{redis_db}", help="flushed before and after")


@contextlib.contextmanager
def own_services(database: Database, redis_url: str):
    """The benchmark's own database, created, and its Redis database, flushed; on the way out, Ctrl-C included, the
    Redis database is flushed again and the database dropped (only those two: Postgres and Redis are shared)."""
    flush = redis.Redis.from_url(redis_url)
    try:
        database.create()
        flush.flushdb()
        yield
    except KeyboardInterrupt:
        print("\ninterrupted; cleaning up", file=sys.stderr)
    finally:
        flush.flushdb()
        flush.close()
        database.drop()


def process_tree(pid: int) -> list[int]:
    """The process and all its living descendants (from /proc/<pid>/task/*/children)."""
    tree, pending = [], [pid]
    while pending:
        current = pending.pop()
        tree.append(current)
        for children in Path(f"/proc/{current}/task").glob("*/children"):
            with contextlib.suppress(FileNotFoundError, ProcessLookupError):  # it ended while we looked
                pending += [int(child) for child in children.read_text().split()]
    return tree


def tree_usage(pid: int) -> tuple[int, float]:
    """The resident memory (VmRSS, bytes) and the user + system CPU-seconds of the process, its threads and its
    descendants, in one walk of the tree; (0, 0.0) once it has ended. An ended child's CPU is in its parent's
    cutime/cstime once reaped, so CPU counts descendants living or gone."""
    rss, ticks = 0, 0
    for member in process_tree(pid):
        try:
            stat = Path(f"/proc/{member}/stat").read_text()
            status = Path(f"/proc/{member}/status").read_text()
        except (FileNotFoundError, ProcessLookupError):
            continue
        ticks += sum(int(value) for value in stat.rsplit(")", 1)[1].split()[11:15])  # utime stime cutime cstime
        line = next((line for line in status.splitlines() if line.startswith("VmRSS:")), "VmRSS: 0 kB")
        rss += int(line.split()[1]) * 1024
    return rss, ticks / CLOCK_TICKS


def tree_cpu_seconds(pid: int) -> float:
    return tree_usage(pid)[1]


def _logged_server_class():
    # Imported here, in the server's own process, which puts the project on sys.path: the benchmarks importing this
    # module do not all have it there.
    from lab.fake_llm.server import FakeLLMServer

    class LoggedFakeServer(FakeLLMServer):
        """The fake server, also logging each chat request's arrival and its last byte sent (epoch seconds):
        `GET /_log` answers `{"requests": [[start, end], …], "models": [model, …]}` (each request's model name as
        sent, in the same order), `POST /_reset` clears it with the counters. A benchmark reads the request span
        (first request → last response) from it, whoever the client is, and each model's (a connection's) own."""

        def __init__(self) -> None:
            super().__init__()
            self.log: list[tuple[float, float]] = []
            self.log_models: list[str] = []

        def reset(self) -> None:
            super().reset()
            self.log, self.log_models = [], []

        async def route(self, request, exchange) -> None:
            if request.path == "/_log" and request.method == "GET":
                return await exchange.send_json(200, {"requests": self.log, "models": self.log_models})
            return await super().route(request, exchange)

        async def chat(self, request, exchange, wire, path, prefix) -> None:
            started = time.time()
            try:
                await super().chat(request, exchange, wire, path, prefix)
            finally:
                self.log.append((started, time.time()))
                self.log_models.append(wire.model(request.json(), path))

    return LoggedFakeServer


def _serve_logged(port: int) -> None:
    from lab.fake_llm.server import serve  # see _logged_server_class

    async def main() -> None:
        listener = await serve(_logged_server_class()(), "127.0.0.1", port)
        print(f"Fake LLM server with a request log on http://127.0.0.1:{port}", flush=True)
        async with listener:
            await listener.serve_forever()

    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(main())


if __name__ == "__main__":  # the logged fake server: python bench/support.py --port N
    import argparse

    sys.path.insert(0, str(ROOT))
    parser = argparse.ArgumentParser(description="The fake LLM server with a request log (GET /_log).")
    parser.add_argument("--port", type=int, required=True)
    _serve_logged(parser.parse_args().port)


@dataclass(frozen=True)
class BenchWorkspace:
    user: object
    workspace: object
    fake_url: str
    database: str  # the benchmark's own database, for the processes it starts


@contextlib.contextmanager
def bench_workspace(prefix: str, *, max_concurrency: int, rpm: int) -> Iterator[BenchWorkspace]:
    """What the database benchmarks run in: a database of their own beside DATABASE_URL's (`<prefix>_<its name>`,
    dropped afterwards), the fake LLM server, and a workspace "Bench" whose connection "bench" points at it. Call
    after django.setup() (the scripts import this module before it, hence the imports here)."""
    from django.contrib.auth import get_user_model
    from django.db import connection

    from lab.services import connection_create, workspace_create

    if connection.vendor != "postgresql":
        sys.exit("Set DATABASE_URL to a Postgres server: the benchmark measures the real database path.")
    original_name = connection.settings_dict["NAME"]
    connection.settings_dict.setdefault("TEST", {})["NAME"] = f"{prefix}_{original_name}"
    connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    server, fake_url = start_fake_server()
    try:
        user = get_user_model().objects.create_user("bench", password="bench-password-0123")
        workspace = workspace_create(owner=user, name="Bench")
        connection_create(
            workspace=workspace,
            name="bench",
            kind="openai_compatible",
            base_url=f"{fake_url}/v1",
            max_concurrency=max_concurrency,
            rpm=rpm,
        )
        yield BenchWorkspace(user, workspace, fake_url, connection.settings_dict["NAME"])
    finally:
        server.terminate()
        server.wait()
        connection.close()
        connection.creation.destroy_test_db(original_name, verbosity=0)
