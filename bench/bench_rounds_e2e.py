"""End-to-end round benchmark: the API, Celery workers, the channel layer and the websocket, as separate processes.

Creates its own Postgres database (dropped and recreated), migrates it, makes a user, a workspace and
OpenAI-compatible connections to the fake LLM server, then starts as separate processes on 127.0.0.1: the fake
LLM server, the web process (daphne) and two Celery workers. It drives them only over HTTP and websockets, as a
browser or a script would, and prints each figure as a ratio against an ideal measured in the same run:

- interactive: POST /runs/ → `round.done` on the group's websocket for a 5-variant round, versus one answer's
  latency (streamed straight from the fake server with httpx) plus the stagger (4 × 50 ms), and where the time
  goes, split at the fake server's log of the round's calls: POST → first call, first call → last answer's end,
  last answer's end → `round.done`;
- batch: 200 rounds × 3 variants through a connection limit of 20, versus ceil(600 / 20) × one answer's latency,
  and the most requests the fake server saw in flight at once;
- streaming: 20 rounds streaming at once, each on its own group and websocket; each token's trip from the fake
  server sending it (it stamps the time in the token) to the websocket client receiving it, against the 100 ms
  target; and the CPU-seconds the web process and the workers spent per 1,000 streamed tokens (from /proc, their
  threads and children included, read before and after the streaming phase).

    python bench/bench_rounds_e2e.py [--database-url postgres://postgres@127.0.0.1:5432/] [--redis-url ...]

Not a test: nothing here asserts; the numbers are for docs/benchmarks.md and for spotting regressions.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import platform
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import websockets
from support import Database, add_service_arguments, free_port, load_average, own_services, tree_cpu_seconds

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
TOKEN = re.compile(r"\S+")
SERVING = ("web", "worker")  # the processes whose CPU the streaming figure counts (not the fake server's)

# Run in the migrated database by `manage.py shell -c`: the user, workspace, connections, an API token and a
# session (for the websockets, which authenticate by session cookie). Prints one JSON line.
SETUP = """
import json
from django.contrib.auth import get_user_model
from django.test import Client
from lab.tokens.services import api_token_create
from lab.services import connection_create, workspace_create

user = get_user_model().objects.create_user(username="bench", password="bench-e2e-2026")
workspace = workspace_create(owner=user, name="Benchmark")
for name, limit in {limits!r}.items():
    connection_create(
        workspace=workspace, name=name, kind="openai_compatible", base_url={base_url!r},
        max_concurrency=limit, rpm=1_000_000,
    )
client = Client()
client.force_login(user)
print(json.dumps({{
    "workspace": workspace.pk,
    "token": api_token_create(user=user, name="bench")[1],
    "session": client.cookies["sessionid"].value,
}}))
"""


def listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, math.ceil(share * len(ordered)) - 1)]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.0f} ms"


class Processes:
    """Child processes with their output in log files; stopped in reverse order, the logs shown if one died."""

    def __init__(self, log_dir: Path, env: dict[str, str]):
        self.log_dir, self.env = log_dir, env
        self.started: list[tuple[str, subprocess.Popen]] = []

    def start(self, name: str, args: list[str], ready: str | Callable[[], bool], timeout: float = 60) -> None:
        """Start a process and wait until `ready` is in its log (or, given a function, until it returns True)."""
        log_path = self.log_dir / f"{name}.log"
        with open(log_path, "wb") as log:
            proc = subprocess.Popen(args, cwd=ROOT, env=self.env, stdout=log, stderr=subprocess.STDOUT)
        self.started.append((name, proc))
        deadline = time.monotonic() + timeout
        is_ready = ready if callable(ready) else lambda: ready.encode() in log_path.read_bytes()
        while not is_ready():
            if proc.poll() is not None or time.monotonic() > deadline:
                tail = log_path.read_bytes().decode(errors="replace")[-3000:]
                raise SystemExit(f"{name} did not start:\n{tail}")
            time.sleep(0.1)

    def check_alive(self) -> None:
        for name, proc in self.started:
            if proc.poll() is not None:
                tail = (self.log_dir / f"{name}.log").read_bytes().decode(errors="replace")[-3000:]
                raise SystemExit(f"{name} exited with {proc.returncode}:\n{tail}")

    def cpu_seconds(self, names: tuple[str, ...]) -> float:
        """CPU-seconds so far of the processes whose name starts with one of `names`, their threads and children."""
        return sum(tree_cpu_seconds(proc.pid) for name, proc in self.started if name.startswith(names))

    def stop(self) -> None:
        for _, proc in reversed(self.started):
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for _, proc in reversed(self.started):
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@dataclass
class Lab:
    web: str
    fake: str  # the fake server's root URL
    workspace: int
    token: str
    session: str
    api: httpx.AsyncClient = field(init=False)

    def __post_init__(self) -> None:
        self.api = httpx.AsyncClient(base_url=self.web, headers={"Authorization": f"Token {self.token}"}, timeout=60)

    async def create_group(self, title: str, models: list[str]) -> int:
        body = {
            "workspace": self.workspace,
            "title": title,
            "mode": "custom",
            "stagger_ms": 50,
            "variants": [{"label": f"V{i}", "model": m, "prompt": "Benchmark."} for i, m in enumerate(models, 1)],
        }
        response = await self.api.post("/api/v1/groups/", json=body)
        if response.status_code != 201:
            raise SystemExit(f"Could not create a group: {response.status_code} {response.text[:500]}")
        return response.json()["id"]

    async def run(self, group: int, repeat: int = 1) -> list[int]:
        response = await self.api.post(f"/api/v1/groups/{group}/runs/", json={"repeat": repeat})
        if response.status_code != 202:
            raise SystemExit(f"Could not start a run: {response.status_code} {response.text[:500]}")
        return [r["id"] for r in response.json()["rounds"]]

    def socket(self, group: int):
        url = self.web.replace("http://", "ws://") + f"/ws/groups/{group}/"
        headers = {"Cookie": f"sessionid={self.session}", "Origin": self.web}
        return websockets.connect(url, additional_headers=headers, max_queue=None)

    async def fake_stats(self) -> dict:
        async with httpx.AsyncClient() as client:
            return (await client.get(f"{self.fake}/_stats")).json()

    async def fake_reset(self) -> None:
        async with httpx.AsyncClient() as client:
            await client.post(f"{self.fake}/_reset")

    async def fake_log(self) -> list[tuple[float, float]]:
        """Each chat request since the last reset: (arrival, last byte sent), on this host's wall clock."""
        async with httpx.AsyncClient() as client:
            return [tuple(pair) for pair in (await client.get(f"{self.fake}/_log")).json()["requests"]]


class GroupSocket:
    """Every event of one group's websocket, with its arrival time (perf_counter)."""

    def __init__(self, socket):
        self.socket = socket
        self.events: list[tuple[float, dict]] = []
        self._wall_offset = time.time() - time.perf_counter()
        self.changed = asyncio.Event()
        self.reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for message in self.socket:
            self.events.append((time.perf_counter(), json.loads(message)))
            self.changed.set()

    async def until(self, condition, timeout: float) -> None:
        async with asyncio.timeout(timeout):
            while not condition(self.events):
                self.changed.clear()
                await self.changed.wait()

    def wall(self, at: float) -> float:
        """An arrival time on the wall clock, to compare with a time stamped by another process on this host."""
        return at + self._wall_offset

    def of_type(self, kind: str) -> list[tuple[float, dict]]:
        return [(at, event) for at, event in self.events if event["type"] == kind]


def rounds_done(round_ids: set[int]):
    return lambda events: round_ids <= {e["round"] for _, e in events if e["type"] == "round.done"}


async def one_answer(fake: str, model: str) -> float:
    """One streamed answer straight from the fake server: request sent → last byte, in seconds."""
    body = {"model": model, "stream": True, "messages": [{"role": "user", "content": "Benchmark."}]}
    async with httpx.AsyncClient(timeout=60) as client:
        started = time.perf_counter()
        async with client.stream("POST", f"{fake}/v1/chat/completions", json=body) as response:
            async for _ in response.aiter_bytes():
                pass
        return time.perf_counter() - started


async def single_latency(fake: str, model: str, times: int) -> float:
    await one_answer(fake, model)  # warm up
    return statistics.median([await one_answer(fake, model) for _ in range(times)])


def failed_outputs(sockets: list[GroupSocket]) -> int:
    return sum(1 for s in sockets for _, e in s.of_type("output.done") if e.get("status") not in (None, "ok"))


async def interactive(lab: Lab, args, model: str, one: float) -> None:
    ideal = one + (args.variants - 1) * 0.05
    models = [f"fast::{model}&id=i{n}" for n in range(args.variants)]
    group = await lab.create_group("Interactive", models)
    walls, parts = [], []
    async with lab.socket(group) as ws:
        events = GroupSocket(ws)
        for _ in range(args.repeats + 1):  # the first warms the workers' connections and is not counted
            await lab.fake_reset()
            started = time.perf_counter()
            (round_id,) = await lab.run(group)
            answered = time.perf_counter()
            await events.until(rounds_done({round_id}), timeout=60)
            done_at = next(at for at, e in events.of_type("round.done") if e["round"] == round_id)
            walls.append(done_at - started)
            parts.append(RoundParts.of(await lab.fake_log(), events, started, answered, done_at))
        events.reader.cancel()
    walls, parts = walls[1:], parts[1:]
    p50, p95 = statistics.median(walls), percentile(walls, 0.95)
    part = {name: statistics.median([getattr(p, name) for p in parts]) for name in RoundParts.__dataclass_fields__}
    print(
        f"\n1. interactive: {args.variants} variants, stagger 50 ms, {args.repeats} rounds one after another\n"
        f"   POST /runs/ → round.done on the websocket: p50 {ms(p50)}, p95 {ms(p95)}, best {ms(min(walls))}\n"
        f"   ideal = one answer {ms(one)} + {args.variants - 1} × 50 ms = {ms(ideal)}\n"
        f"   p50 / ideal {p50 / ideal:.2f}, p50 − ideal {ms(p50 - ideal)} (target ≤ +50 ms), "
        f"p95 / ideal {p95 / ideal:.2f}; failed answers: {failed_outputs([events])}\n"
        f"   where it goes (p50 of each): POST → its answer {ms(part['post'])}; POST → the first call at the fake "
        f"server {ms(part['to_first_call'])}; first call → last answer's end {ms(part['calls'])} (the ideal's "
        f"{ms(ideal)}); last answer's end → round.done here {ms(part['to_done'])}"
    )


@dataclass
class RoundParts:
    """One interactive round's time, in seconds, split at the fake server's log of its calls."""

    post: float  # POST /runs/ → its 202 here
    to_first_call: float  # POST → the first of the round's calls reaching the fake server
    calls: float  # that call → the last byte of the last answer (the ideal: one answer + the staggers)
    to_done: float  # that byte → round.done reaching this client

    @classmethod
    def of(cls, log, events: GroupSocket, started: float, answered: float, done_at: float) -> RoundParts:
        first, last = min(start for start, _ in log), max(end for _, end in log)
        return cls(answered - started, first - events.wall(started), last - first, events.wall(done_at) - last)


async def batch(lab: Lab, args, model: str, one: float) -> None:
    calls = args.batch_rounds * 3
    ideal = math.ceil(calls / args.batch_limit) * one
    group = await lab.create_group("Batch", [f"batch::{model}&id=b{n}" for n in range(3)])
    await lab.fake_reset()
    async with lab.socket(group) as ws:
        events = GroupSocket(ws)
        started = time.perf_counter()
        round_ids: set[int] = set()
        for first in range(0, args.batch_rounds, 100):  # at most 100 rounds per request
            round_ids |= set(await lab.run(group, repeat=min(100, args.batch_rounds - first)))
        await events.until(rounds_done(round_ids), timeout=args.batch_rounds * 3)
        wall = max(at for at, e in events.of_type("round.done")) - started
        events.reader.cancel()
    stats = await lab.fake_stats()
    statuses = [e["status"] for _, e in events.of_type("round.done")]
    print(
        f"\n2. batch: {args.batch_rounds} rounds × 3 variants = {calls} calls, connection limit {args.batch_limit}\n"
        f"   first POST → last round.done: {ms(wall)}; ideal ceil({calls} / {args.batch_limit}) × {ms(one)} = "
        f"{ms(ideal)}\n"
        f"   wall / ideal {wall / ideal:.2f} (target ≤ 1.10); fake server: {stats['requests']} requests, "
        f"max in flight {stats['max_in_flight']} (limit {args.batch_limit}); rounds not done: "
        f"{sum(1 for s in statuses if s != 'done')}; failed answers: {failed_outputs([events])}"
    )


def token_lags(socket: GroupSocket) -> list[float]:
    """Each token's trip, in seconds: from the fake server sending it (the time stamped in the token) to the
    `output.delta` carrying its last character reaching this client. Both clocks are this host's wall clock."""
    deltas: dict[int, list[tuple[int, float]]] = {}
    texts: dict[int, str] = {}
    for at, event in socket.of_type("output.delta"):
        deltas.setdefault(event["output"], []).append((event["offset"] + len(event["text"]), socket.wall(at)))
        texts[event["output"]] = texts.get(event["output"], "")[: event["offset"]] + event["text"]
    return [
        next(at for end, at in received if end >= m.end()) - int(m.group()[1:]) / 1e6
        for output, received in deltas.items()
        for m in TOKEN.finditer(texts[output])
    ]


async def streaming(lab: Lab, args, procs: Processes) -> None:
    model = f"fake?ttft_ms=100&tokens={args.stream_tokens}&token_ms={args.stream_token_ms}&stamp=1"
    groups = [
        await lab.create_group(f"Streaming {n}", [f"stream::{model}&id=s{n}v{v}" for v in range(3)])
        for n in range(args.stream_rounds)
    ]
    await lab.fake_reset()
    sockets = []
    cpu = procs.cpu_seconds(SERVING)
    try:
        for group in groups:
            sockets.append(GroupSocket(await lab.socket(group).__aenter__()))
        round_ids = await asyncio.gather(*(lab.run(group) for group in groups))
        await asyncio.gather(
            *(s.until(rounds_done(set(ids)), timeout=120) for s, ids in zip(sockets, round_ids, strict=True))
        )
    finally:
        for s in sockets:
            s.reader.cancel()
            await s.socket.close()
    cpu = procs.cpu_seconds(SERVING) - cpu
    stats = await lab.fake_stats()
    lags = [lag for s in sockets for lag in token_lags(s)]
    events = sum(len(s.of_type("output.delta")) for s in sockets)
    print(
        f"\n3. streaming: {args.stream_rounds} rounds × 3 variants started at once, each group on its own websocket "
        f"({model}); the fake server saw at most {stats['max_in_flight']} answers in flight; "
        f"failed answers: {failed_outputs(sockets)}\n"
        f"   {len(lags)} tokens in {events} output.delta events. Each token from the fake server sending it to the "
        f"websocket client receiving it (deltas coalesced every 50 ms):\n"
        f"   p50 {ms(statistics.median(lags))}, p95 {ms(percentile(lags, 0.95))} "
        f"(p95 / target {percentile(lags, 0.95) / 0.1:.2f}, target ≤ 100 ms), "
        f"p99 {ms(percentile(lags, 0.99))}, max {ms(max(lags))}\n"
        f"   CPU of the web process and the workers while streaming: {cpu:.2f} s, "
        f"{cpu / len(lags) * 1000:.2f} s per 1,000 streamed tokens"
    )


def machine(database: Database) -> str:
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return (
        f"{platform.node()}: {os.cpu_count()} CPUs ({platform.processor() or platform.machine()}), load average "
        f"{load}, Python {platform.python_version()}, Postgres {database.version()}"
    )


def start_services(args, procs: Processes, log_dir: Path) -> tuple[str, str]:
    fake_port, web_port = free_port(), free_port()
    fake = f"http://127.0.0.1:{fake_port}"
    # The fake server with a request log (bench/support.py), for where an interactive round's time goes.
    logged = [sys.executable, str(ROOT / "bench" / "support.py"), "--port", str(fake_port)]
    procs.start("fake_llm", logged, "Fake LLM server with a request log on")
    migrate = subprocess.run(
        [sys.executable, "manage.py", "migrate", "--noinput"], cwd=ROOT, env=procs.env, capture_output=True, text=True
    )
    if migrate.returncode:
        raise SystemExit(f"migrate failed:\n{migrate.stdout[-2000:]}{migrate.stderr[-2000:]}")
    # A skipped phase (0 rounds) still gets a valid connection: a limit is at least 1.
    limits = {"fast": 16, "batch": max(1, args.batch_limit), "stream": max(1, 3 * args.stream_rounds)}
    setup = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", SETUP.format(limits=limits, base_url=f"{fake}/v1")],
        cwd=ROOT,
        env=procs.env,
        capture_output=True,
        text=True,
    )
    if setup.returncode:
        raise SystemExit(f"setup failed:\n{setup.stdout[-2000:]}{setup.stderr[-2000:]}")
    (log_dir / "setup.json").write_text(setup.stdout.strip().splitlines()[-1])
    procs.start(
        "web",
        [str(BIN / "daphne"), "-b", "127.0.0.1", "-p", str(web_port), "promptlab.asgi:application"],
        lambda: listening(web_port),
    )
    for n in range(1, args.workers + 1):
        procs.start(
            f"worker{n}",
            [
                str(BIN / "celery"),
                "-A",
                "promptlab",
                "worker",
                "--loglevel=INFO",
                f"--concurrency={args.concurrency}",
                "--without-mingle",
                "--without-gossip",
                f"--hostname=bench{n}@%h",
            ],
            "ready.",
        )
    return f"http://127.0.0.1:{web_port}", fake


async def measure(args, web: str, fake: str, setup: dict, procs: Processes) -> None:
    lab = Lab(web=web, fake=fake, **setup)
    model = f"fake?ttft_ms={args.ttft_ms}&tokens={args.tokens}&token_ms={args.token_ms}"
    batch_model = f"fake?ttft_ms={args.ttft_ms}&tokens={args.batch_tokens}&token_ms={args.token_ms}"
    try:
        one = await single_latency(fake, f"{model}&id=single", args.single)
        one_batch = await single_latency(fake, f"{batch_model}&id=single-batch", args.single)
        print(
            f"one answer straight from the fake server (httpx, streamed, p50 of {args.single}): "
            f"{model} {ms(one)}; {batch_model} {ms(one_batch)}"
        )
        if args.repeats:
            await interactive(lab, args, model, one)
        if args.batch_rounds:
            await batch(lab, args, batch_model, one_batch)
        if args.stream_rounds:
            await streaming(lab, args, procs)
    finally:
        await lab.api.aclose()


def main(args: argparse.Namespace) -> None:
    database = Database(args.database_url, args.database)
    log_dir = Path(tempfile.mkdtemp(prefix="bench_e2e_"))
    env = {
        **os.environ,
        "DATABASE_URL": database.url,
        "REDIS_URL": args.redis_url,
        # Production settings (no query log, no debug cursor), on plain HTTP over loopback.
        "DEBUG": "0",
        "SECRET_KEY": "bench-e2e-only-" + "x" * 40,
        "ALLOWED_HOSTS": "127.0.0.1",
        "SECURE_SSL_REDIRECT": "0",
        "PYTHONUNBUFFERED": "1",
        "CELERY_WORKER_POOL": args.pool,
    }
    env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
    procs = Processes(log_dir, env)
    print(f"# End-to-end round benchmark — {machine(database)}")
    print(
        f"{args.workers} Celery workers × concurrency {args.concurrency} ({args.pool}), daphne, fake LLM server; "
        f"logs in {log_dir}"
    )
    with own_services(database, args.redis_url):
        try:
            started = time.perf_counter()
            web, fake = start_services(args, procs, log_dir)
            print(f"database {database.name} migrated and processes started in {time.perf_counter() - started:.1f} s")
            asyncio.run(measure(args, web, fake, json.loads((log_dir / "setup.json").read_text()), procs))
            procs.check_alive()
            print(f"\nload average at the end: {load_average()}")
        finally:
            procs.stop()
            if not args.keep_logs:
                shutil.rmtree(log_dir, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_service_arguments(parser, database="promptlab_bench_e2e", redis_db=11)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--pool", choices=["threads", "prefork"], default="threads", help="Celery worker pool")
    parser.add_argument("--concurrency", type=int, default=16, help="rounds at once per worker (threads or processes)")
    parser.add_argument("--single", type=int, default=7, help="direct calls to the fake server for the ideal")
    parser.add_argument("--variants", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=15, help="interactive rounds (0 skips)")
    parser.add_argument("--ttft-ms", type=int, default=300)
    parser.add_argument("--tokens", type=int, default=60)
    parser.add_argument("--token-ms", type=int, default=10)
    parser.add_argument("--batch-rounds", type=int, default=200, help="(0 skips)")
    parser.add_argument("--batch-limit", type=int, default=20)
    parser.add_argument("--batch-tokens", type=int, default=20, help="tokens per batch answer")
    parser.add_argument("--stream-rounds", type=int, default=20, help="(0 skips)")
    parser.add_argument("--stream-tokens", type=int, default=100)
    parser.add_argument("--stream-token-ms", type=int, default=20)
    parser.add_argument("--keep-logs", action="store_true")
    main(parser.parse_args())
