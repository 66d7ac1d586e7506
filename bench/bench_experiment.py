"""Experiment benchmark: 3 prompts × 2 models × 100 dataset rows (600 answers) through one connection that allows 20
requests at a time, run the way `manage.py experiment run` runs it, against the fake LLM server; wall time against
the ideal.

Everything real but the provider: the experiment is read from a YAML file, saved as a custom comparison, its rounds
queued by `round_start` without a message to the workers and run in this process as the command runs them
(`experiment_run_here`: claimed and written in batches on the engine loop) with at most `--concurrency` calls in
flight, DEBUG's query log off, every answer written to Postgres, slots taken from the connection limiter (Redis
when REDIS_URL is set). The ideal is ceil(answers / limit) × one answer's latency measured alone first (the median
of a few answers run one at a time, the same way); the median latency each run recorded (slot wait excluded) shows
how much the machine itself slows answers down when 20 stream at once.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/promptlab [REDIS_URL=redis://127.0.0.1:6379/0] \\
        python bench/bench_experiment.py [--rows 100] [--limit 20] [--concurrency 4 8 16]

It creates a database of its own beside DATABASE_URL's (bench_experiment_<name>) and drops it at the end.
Not a test: nothing is asserted; the numbers are for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "promptlab.settings")
os.environ.setdefault("EMBEDDED_WORKER", "0")
# Round threads hold a database connection while they claim and finish rounds; leave room for the most tried.
os.environ.setdefault("DB_POOL_MAX_SIZE", "40")

import django  # noqa: E402
from support import bench_workspace  # noqa: E402

django.setup()

import httpx  # noqa: E402
from django.conf import settings  # noqa: E402
from django.test import override_settings  # noqa: E402

from compare.experiments.config import config_read  # noqa: E402
from compare.experiments.files import DirectoryFiles  # noqa: E402
from compare.experiments.runner import experiment_run_here  # noqa: E402
from compare.experiments.services import experiment_create, experiment_start  # noqa: E402
from compare.models import Output, OutputStatus  # noqa: E402

PROMPTS = 3
MODELS = 2


def experiment_file(folder: Path, rows: int, scenario: str, *, models: int = MODELS, prompts: int = PROMPTS) -> Path:
    model_list = "\n".join(f"  - model: 'bench:fake?{scenario}&id=m{m}'" for m in range(models))
    prompt_list = "\n".join(
        f"  - name: p{p}\n    prompt: 'Variant {p}: answer the question <<q>>'" for p in range(prompts)
    )
    dataset = "\n".join(f"  - name: r{r}\n    vars: {{q: 'number {r}?'}}" for r in range(rows))
    path = folder / f"bench-{models}x{prompts}x{rows}.yaml"
    path.write_text(f"name: Benchmark\nmodels:\n{model_list}\nprompts:\n{prompt_list}\ndataset:\n{dataset}\n")
    return path


def run_once(path: Path, workspace, user, concurrency: int, fake_url: str) -> dict:
    """One run as `manage.py experiment run` makes it: its rounds started without a message to the workers
    (`run_here`), with DEBUG's query log off (the command's default), timed from the start to the last answer."""
    httpx.post(f"{fake_url}/_reset")
    config = config_read(path.read_text(), source=path.name, files=DirectoryFiles(path.parent))
    experiment = experiment_create(workspace=workspace, user=user, config=config)
    started, cpu = time.perf_counter(), time.process_time()
    with override_settings(DEBUG=False):
        experiment_start(experiment=experiment, user=user, run_here=True)
        experiment_run_here(experiment=experiment, concurrency=concurrency, on_progress=lambda progress: None)
    wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    outputs = Output.objects.filter(round__group=experiment.group)
    timed = outputs.filter(status=OutputStatus.OK, latency_ms__isnull=False)  # a cached answer has no latency
    latencies = [ms / 1000 for ms in timed.values_list("latency_ms", flat=True)]
    return {
        "wall": wall,
        "cpu": cpu,  # this process's, all threads: the fake server runs in its own
        "answers": outputs.count(),
        "ok": len(latencies),
        "latency": statistics.median(latencies) if latencies else float("nan"),
        "max_in_flight": httpx.get(f"{fake_url}/_stats").json()["max_in_flight"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=100)
    parser.add_argument("--limit", type=int, default=20, help="the connection's max_concurrency")
    parser.add_argument("--concurrency", type=int, nargs="+", default=[4, 8, 16], help="calls in flight at most")
    parser.add_argument("--ttft-ms", type=int, default=200)
    parser.add_argument("--tokens", type=int, default=50)
    parser.add_argument("--token-ms", type=int, default=10)
    args = parser.parse_args()
    with bench_workspace("bench_experiment", max_concurrency=args.limit, rpm=1_000_000) as bench:
        workspace, user, fake_url = bench.workspace, bench.user, bench.fake_url
        scenario = f"ttft_ms={args.ttft_ms}&tokens={args.tokens}&token_ms={args.token_ms}"
        answers = PROMPTS * MODELS * args.rows
        print(
            f"{PROMPTS} prompts × {MODELS} models × {args.rows} rows = {answers} answers, connection limit "
            f"{args.limit}, fake answers: {scenario}; limiter: {'Redis' if settings.REDIS_URL else 'in process'}; "
            f"Python {platform.python_version()}, {os.cpu_count()} CPUs"
        )
        with tempfile.TemporaryDirectory() as folder:
            path = experiment_file(Path(folder), args.rows, scenario)
            run_once(path, workspace, user, 4, fake_url)  # warm-up: catalogs, connections, imports
            alone = run_once(
                experiment_file(Path(folder), 7, scenario, models=1, prompts=1), workspace, user, 1, fake_url
            )
            ideal = math.ceil(answers / args.limit) * alone["latency"]
            print(f"One answer alone: {alone['latency'] * 1000:.0f} ms (median of 7); ideal: {ideal:.2f} s")
            print("| rounds at once | wall | ideal | wall ÷ ideal | answers ok | median answer | in flight | CPU |")
            print("|---:|---:|---:|---:|---:|---:|---:|---:|")
            for concurrency in args.concurrency:
                result = run_once(path, workspace, user, concurrency, fake_url)
                print(
                    f"| {concurrency} | {result['wall']:.2f} s | {ideal:.2f} s | {result['wall'] / ideal:.2f}× | "
                    f"{result['ok']}/{result['answers']} | {result['latency'] * 1000:.0f} ms | "
                    f"{result['max_in_flight']} | {result['cpu']:.1f} s |"
                )


if __name__ == "__main__":
    main()
