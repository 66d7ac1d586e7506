"""An experiment on the workers (services mode) against the same experiment run by the command, side by side.

The same experiment file (3 prompts × 1 model × rows, one OpenAI-compatible connection with `max_concurrency` C,
answers of about 0.69 s: 200 ms to the first token, then 50 tokens 10 ms apart) runs three ways, against the fake
LLM server with a request log (bench/support.py) in a process of its own, with production settings and a database
of the benchmark's own:

- command: `manage.py experiment run FILE` in one process, no flags, as documented;
- 1 worker: started as the experiment page starts it (`experiment_create` then `experiment_start` without
  `run_here`, in a process of its own: one round per dataset row sent to the `batch` queue), run by one Celery
  worker process started as `make worker` starts it (both lanes, the default thread count);
- 2 workers: the same with a second worker process beside the first.

For each it prints the request span (first request → last response at the fake server) ÷ the ideal ceil(N / C) × L
(L: one answer alone, from the same log), the start → the first request, the calls in flight (the most at once,
and the connection's slots busy over the span, as a share), how long a freed place stays empty on average, the
rounds each worker process claimed (from `claimed_by`), and the CPU per call of the worker processes (or the
command's process), read from /proc around the run.

    python bench/bench_experiment_workers.py [--sizes 20:300 100:3000] [--modes command 1 2]
        [--database-url postgres://postgres@127.0.0.1:5432/] [--redis-url redis://127.0.0.1:6379/13]

Not a test: nothing here asserts (tests/compare/test_experiment_workers.py holds the rule).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import psycopg
from bench_rounds_e2e import BIN, Processes
from bench_vs_promptfoo import (
    SETUP,
    FakeServer,
    Matrix,
    freed_place_wait_ms,
    most_in_flight,
    promptlab_file,
    run_process,
)
from support import ROOT, Database, add_service_arguments, load_average, own_services

MODES = ("command", "1", "2")  # the command; one worker process; two
MODEL = "fake?ttft_ms={ttft}&tokens={tokens}&token_ms={token_ms}&id={tag}"


# What the experiment page's "Run" does (compare/experiments/views.py experiment_run): save the checked file as an
# experiment and start it, which sends one message per round to the workers once the transaction commits.
START = """
import json, time
from pathlib import Path
from django.contrib.auth import get_user_model
from compare.experiments.config import config_read
from compare.experiments.files import DirectoryFiles
from compare.experiments.services import experiment_create, experiment_start
from lab.models import Workspace

path = Path({path!r})
user = get_user_model().objects.get(username="bench")
workspace = Workspace.objects.get(name="Benchmark")
started = time.time()
config = config_read(path.read_text(), source=str(path), files=DirectoryFiles(path.parent), workspace=workspace)
experiment = experiment_create(workspace=workspace, user=user, config=config, source=str(path))
experiment_start(experiment=experiment, user=user)
print(json.dumps({{"started": started, "sent": time.time(), "group": experiment.group_id}}))
"""

UNFINISHED = "SELECT count(*) FROM compare_round WHERE group_id = %s AND status IN ('queued', 'running')"
OUTCOME = """
SELECT count(*) FILTER (WHERE o.status = 'ok'), count(*) FROM compare_output o
JOIN compare_round r ON r.id = o.round_id WHERE r.group_id = %s
"""
CLAIMED_BY = """
SELECT coalesce(w.node, '(none)'), count(*) FROM compare_round r LEFT JOIN lab_workerprocess w ON w.id = r.claimed_by
WHERE r.group_id = %s GROUP BY 1 ORDER BY 1
"""


@dataclass
class Result:
    mode: str
    concurrency: int
    calls: int
    ideal: float
    span: float
    lead: float  # start (the command's, or the page's save) → the first request
    most: int  # requests in flight at once, at most
    busy: float  # the connection's slots busy over the span: Σ request durations ÷ (span × C)
    freed_ms: float | None
    cpu_ms: float  # CPU per call of the worker processes (or the command's process)
    claimed: dict[str, int]
    ok: int
    answers: int

    def line(self) -> str:
        spread = ", ".join(f"{node.split('@')[0]} {n}" for node, n in self.claimed.items()) or "—"
        return (
            f"| {self.concurrency} | {self.calls} | {self.mode_name()} | {self.ideal:.2f} s | {self.span:.2f} s | "
            f"{self.span / self.ideal:.2f} | {self.lead:.2f} s | {self.most} | {self.busy:.0%} | "
            f"{'—' if self.freed_ms is None else f'{self.freed_ms:.0f} ms'} | {self.cpu_ms:.1f} ms | {spread} | "
            f"{self.ok}/{self.answers} |"
        )

    def mode_name(self) -> str:
        return {"command": "command", "1": "1 worker", "2": "2 workers"}[self.mode]


def busy_share(requests: list[tuple[float, float]], concurrency: int) -> float:
    first, last = min(s for s, _ in requests), max(e for _, e in requests)
    return sum(e - s for s, e in requests) / ((last - first) * concurrency)


class Bench:
    def __init__(self, args, database: Database, folder: Path):
        self.args, self.folder = args, folder
        self.fake = FakeServer()
        self.env = {key: value for key, value in os.environ.items() if not key.endswith(("_API_KEY", "_BASE_URL"))}
        self.env |= {
            "DATABASE_URL": database.url,
            "REDIS_URL": args.redis_url,
            # Production settings (no query log, no debug cursor), on plain HTTP over loopback.
            "DEBUG": "0",
            "SECRET_KEY": "bench-workers-only-" + "x" * 40,
            "ALLOWED_HOSTS": "127.0.0.1",
            "SECURE_SSL_REDIRECT": "0",
            "PYTHONUNBUFFERED": "1",
        }
        self.env.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        self.env.pop("CELERY_WORKER_CONCURRENCY", None)  # as `make worker`: the settings' default
        self.database = database
        self.procs = Processes(folder, self.env)
        self.workers = 0

    def manage(self, *args: str) -> str:
        command = [sys.executable, "manage.py", *args]
        done = subprocess.run(command, cwd=ROOT, env=self.env, capture_output=True, text=True)
        if done.returncode:
            raise SystemExit(f"manage.py {args[0]} failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
        return done.stdout

    def setup(self, limits: set[int]) -> None:
        self.manage("migrate", "--noinput")
        self.manage("shell", "-c", SETUP.format(limits=sorted(limits), base_url=f"{self.fake.url}/v1"))

    def model(self, tag: str) -> str:
        args = self.args
        return MODEL.format(ttft=args.ttft_ms, tokens=args.tokens, token_ms=args.token_ms, tag=tag)

    def one_answer_s(self) -> float:
        """L: one answer alone, as the fake server timed it (median of five, one after another)."""
        self.fake.reset()
        body = {"model": self.model("alone"), "stream": True, "messages": [{"role": "user", "content": "One."}]}
        with httpx.Client(timeout=60) as client:
            for _ in range(5):
                with client.stream("POST", f"{self.fake.url}/v1/chat/completions", json=body) as response:
                    for _ in response.iter_bytes():
                        pass
        return statistics.median(end - start for start, end in self.fake.log())

    def workers_up_to(self, count: int) -> None:
        while self.workers < count:
            self.workers += 1
            self.procs.start(
                f"worker{self.workers}",
                [
                    str(BIN / "celery"),
                    "-A",
                    "promptlab",
                    "worker",
                    "--loglevel=INFO",
                    "-Q",
                    "interactive,batch",
                    "--without-mingle",
                    "--without-gossip",
                    f"--hostname=worker{self.workers}@%h",
                ],
                "ready.",
            )

    def run(self, mode: str, concurrency: int, matrix: Matrix, tag: str) -> Result:
        path = promptlab_file(self.folder, matrix, [(f"c{concurrency}", self.model(tag))])
        self.fake.reset()
        if mode == "command":
            command = [sys.executable, "manage.py", "experiment", "run", str(path), "--workspace", "Benchmark"]
            ran = run_process(command, self.env, self.folder / f"command-{tag}.log")
            if ran.code:
                tail = (self.folder / f"command-{tag}.log").read_text(errors="replace")[-2000:]
                raise SystemExit(f"the command exited with {ran.code}:\n{tail}")
            started, cpu, group = ran.started, ran.cpu, None
        else:
            self.workers_up_to(int(mode))
            cpu_before = self.procs.cpu_seconds(("worker",))
            sent = json.loads(self.manage("shell", "-c", START.format(path=str(path))).strip().splitlines()[-1])
            started, group = sent["started"], sent["group"]
            self.wait_for(group, timeout_s=matrix.calls * 2)
            cpu = self.procs.cpu_seconds(("worker",)) - cpu_before
            self.procs.check_alive()
        requests = self.fake.log()
        (self.folder / f"requests-{tag}.json").write_text(json.dumps(requests))  # kept with --keep
        first, ends = min(s for s, _ in requests), sorted(e for _, e in requests)
        with psycopg.connect(self.database.url) as db:
            group = group or db.execute("SELECT max(group_id) FROM compare_round").fetchone()[0]
            ok, answers = db.execute(OUTCOME, (group,)).fetchone()
            claimed = dict(db.execute(CLAIMED_BY, (group,)).fetchall()) if mode != "command" else {}
        return Result(
            mode,
            concurrency,
            matrix.calls,
            ideal=math.ceil(matrix.calls / concurrency) * self.args.latency,
            span=ends[-1] - first,
            lead=first - started,
            most=most_in_flight(requests),
            busy=busy_share(requests, concurrency),
            freed_ms=freed_place_wait_ms(requests, concurrency),
            cpu_ms=cpu / len(requests) * 1000,
            claimed=claimed,
            ok=ok,
            answers=answers,
        )

    def wait_for(self, group: int, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        with psycopg.connect(self.database.url, autocommit=True) as db:
            while db.execute(UNFINISHED, (group,)).fetchone()[0]:
                if time.monotonic() > deadline:
                    raise SystemExit(f"the experiment was not done after {timeout_s:.0f} s; logs in {self.folder}")
                self.procs.check_alive()
                time.sleep(0.05)

    def stop(self) -> None:
        self.procs.stop()
        self.fake.stop()


def parse_size(text: str) -> tuple[int, int]:
    concurrency, _, calls = text.partition(":")
    return int(concurrency), int(calls)


def main(args: argparse.Namespace) -> None:
    database = Database(args.database_url, args.database)
    folder = Path(tempfile.mkdtemp(prefix="bench_workers_"))
    sizes = [parse_size(s) for s in args.sizes]
    print(
        f"# An experiment on the workers against the command — {platform.node()}: {os.cpu_count()} CPUs, load "
        f"average {load_average()}, Python {platform.python_version()}, Postgres {database.version()}\n"
        f"sizes (C:calls) {' '.join(args.sizes)}, modes {' '.join(args.modes)}; logs in {folder}"
    )
    with own_services(database, args.redis_url):
        bench = Bench(args, database, folder)
        try:
            bench.setup({c for c, _ in sizes} | {WARM_LIMIT})
            args.latency = bench.one_answer_s()
            print(f"one answer alone (L, at the fake server): {args.latency * 1000:.0f} ms ({bench.model('…')})")
            results = []
            for mode in args.modes:
                # Not counted: imports, caches, the first connections to the fake server and Redis.
                bench.run(mode, WARM_LIMIT, Matrix(3, 40), f"warm-{mode}")
                for concurrency, calls in sizes:
                    result = bench.run(mode, concurrency, Matrix.for_calls(calls), f"m{mode}c{concurrency}")
                    results.append(result)
                    print(
                        f"{result.mode_name()}, C={concurrency}: span ÷ ideal {result.span / result.ideal:.2f}; "
                        f"load average {load_average()}",
                        flush=True,
                    )
        finally:
            bench.stop()
            if not args.keep:
                shutil.rmtree(folder, ignore_errors=True)
    print(
        "\n| C | calls | run by | ideal | span | span ÷ ideal | start → first request | most in flight "
        "| slots busy | freed place empty | CPU per call | rounds per worker process | answers ok |"
    )
    print("|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|")
    for concurrency, calls in sizes:
        for result in results:
            if (result.concurrency, result.calls) == (concurrency, Matrix.for_calls(calls).calls):
                print(result.line())
    print(f"\nload average at the end: {load_average()}")


WARM_LIMIT = 20

if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", nargs="+", default=["20:300", "100:3000"], help="C:calls, each run every way")
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES), help="command, 1 worker, 2")
    parser.add_argument("--ttft-ms", type=int, default=200)
    parser.add_argument("--tokens", type=int, default=50)
    parser.add_argument("--token-ms", type=int, default=10)
    add_service_arguments(parser, database="promptlab_bench_workers", redis_db=13)
    parser.add_argument("--keep", action="store_true", help="keep the files and logs")
    main(parser.parse_args())
