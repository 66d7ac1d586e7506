"""Response cache benchmark: an experiment file with `cache: true` (3 prompts × 1 model × 1,000 rows = 3,000 calls)
run twice, as `manage.py experiment run` runs it, against the fake LLM server; the re-run's wall as a share of
the first run's (the target: at most 5 %).

The first run makes every call and stores each complete answer; the second is the same file again (a new
experiment in the same workspace), so every call is identical and answered from the cache: no HTTP, and one
UPDATE for the hits of all the rounds claimed together. Both runs are made as the command makes them
(bench_experiment.run_once). Everything else is real: Postgres, the runner's threads, each round's claim and
finish, the channel layer (Redis when REDIS_URL is set).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/promptlab [REDIS_URL=redis://127.0.0.1:6379/0] \\
        python bench/bench_cache.py [--rows 1000] [--limit 100] [--concurrency 16]

It creates a database of its own beside DATABASE_URL's (bench_experiment_<name>) and drops it at the end.
Not a test: nothing is asserted; the numbers are for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
from pathlib import Path

import httpx
from bench_experiment import experiment_file, run_once  # sets the environment and Django up, as it runs
from django.conf import settings
from support import bench_workspace

from compare.experiments.models import Experiment
from compare.models import CachedAnswer, Output, OutputStatus

PROMPTS, MODELS = 3, 1


def run(path: Path, workspace, user, concurrency: int, fake_url: str) -> dict:
    """bench_experiment's run (the fake server's counters reset first), with every answer counted and those
    that came from the cache."""
    result = run_once(path, workspace, user, concurrency, fake_url)
    group = Experiment.objects.latest("id").group
    result["ok"] = Output.objects.filter(round__group=group, status=OutputStatus.OK).count()
    result["cached"] = Output.objects.filter(round__group=group, cached=True).count()
    result["requests"] = httpx.get(f"{fake_url}/_stats").json()["requests"]
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1000)
    parser.add_argument("--limit", type=int, default=100, help="the connection's max_concurrency")
    parser.add_argument("--concurrency", type=int, default=16, help="rounds run at once")
    parser.add_argument("--ttft-ms", type=int, default=200)
    parser.add_argument("--tokens", type=int, default=50)
    parser.add_argument("--token-ms", type=int, default=10)
    args = parser.parse_args()
    with bench_workspace("bench_experiment", max_concurrency=args.limit, rpm=1_000_000) as bench:
        workspace, user, fake_url = bench.workspace, bench.user, bench.fake_url
        scenario = f"ttft_ms={args.ttft_ms}&tokens={args.tokens}&token_ms={args.token_ms}"
        calls = PROMPTS * MODELS * args.rows
        print(
            f"{PROMPTS} prompts × {MODELS} model × {args.rows} rows = {calls} calls, connection limit {args.limit}, "
            f"{args.concurrency} rounds at once, fake answers: {scenario}; limiter: "
            f"{'Redis' if settings.REDIS_URL else 'in process'}; Python {platform.python_version()}, "
            f"{os.cpu_count()} CPUs; load average before: {Path('/proc/loadavg').read_text().split()[:3]}"
        )
        with tempfile.TemporaryDirectory() as folder:
            warm = experiment_file(Path(folder), 5, scenario + "&warm=1", models=MODELS, prompts=PROMPTS)
            warm.write_text(warm.read_text() + "cache: true\n")
            run(warm, workspace, user, 4, fake_url)  # warm-up: catalogs, connections, imports
            path = experiment_file(Path(folder), args.rows, scenario, models=MODELS, prompts=PROMPTS)
            path.write_text(path.read_text() + "cache: true\n")
            first = run(path, workspace, user, args.concurrency, fake_url)
            again = run(path, workspace, user, args.concurrency, fake_url)
        print("| run | wall | CPU | answers ok | cached | requests |")
        print("|---|---:|---:|---:|---:|---:|")
        for name, result in (("first (fills the cache)", first), ("again (from the cache)", again)):
            print(
                f"| {name} | {result['wall']:.2f} s | {result['cpu']:.1f} s | {result['ok']}/{result['answers']} | "
                f"{result['cached']} | {result['requests']} |"
            )
        print(f"Cache entries: {CachedAnswer.objects.count()}")
        print(f"Re-run wall ÷ first run wall: {again['wall'] / first['wall']:.3f} (target ≤ 0.05)")
        per_call = {name: result["cpu"] / calls * 1000 for name, result in (("first", first), ("again", again))}
        print(f"CPU per call: re-run {per_call['again']:.2f} ms, first run {per_call['first']:.2f} ms")
        print(f"Load average after: {Path('/proc/loadavg').read_text().split()[:3]}")


if __name__ == "__main__":
    main()
