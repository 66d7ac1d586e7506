"""`make bench`'s scripts still run against the engine as it is now: each with the smallest workload, checked for
the figures it prints. Nothing is timed here; the figures themselves are the benchmark's business.

A benchmark subclasses the engine's parts (a limiter that grants every slot, say); one that falls behind an
abstract method added to the engine stops `make bench` at its first line, which nothing else would notice.
`make bench-quick` is checked without running: each of its commands names a script that exists, with options it has."""

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

from django.conf import settings

from tests.fixtures.processes import redis_url

ROOT = Path(__file__).resolve().parents[2]


def run_bench(script: str, *args: str) -> str:
    env = {**os.environ, "REDIS_URL": settings.REDIS_URL}
    done = subprocess.run(
        [sys.executable, f"bench/{script}", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "Traceback" not in output, output  # an error the script logged and went on (a send to a closed client)
    return output


def test_the_fan_out_benchmark_runs_every_limiter_through_every_section():
    output = run_bench(
        "bench_fanout.py",
        *("--repeats", "1", "--variants", "2", "--ttft-ms", "20", "--tokens", "5", "--token-ms", "2"),
        *("--batch-calls", "4", "--batch-limit", "2", "--streaming-rounds", "1"),
    )

    costs = output.split("limiter cost of one slot")[1]
    assert [line.split()[0] for line in costs.splitlines()[1:4]] == ["none", "local", "redis"]
    assert "token → listener: p50" in output


def test_the_side_by_side_benchmark_runs_an_experiment_and_its_floor_and_prints_its_targets():
    output = run_bench(
        "bench_vs_promptfoo.py",
        *("--tools", "promptlab", "httpx", "--runs", "1", "--calls", "8", "--concurrency", "4", "--latency-ms", "20"),
        *("--memory-calls", "0"),
        # Not the benchmark's own database and Redis database, which it drops and flushes: a run of it may be on.
        *("--database", "promptlab_test_bench_vs_promptfoo", "--redis-url", redis_url(13)),
    )

    # Where the wall goes outside the span: start-up and saving before it, the results after it.
    spans = r"wall \d+\.\d s \(start → first request \d+\.\d\d s, span \d+\.\d s, last answer → exit \d+\.\d\d s\)"
    assert re.search(rf"run 1 C=4 promptlab: {spans}", output), output
    made = re.findall(r"9 requests \(4 at most in flight, a freed place empty \d+\.\d ms on average\), exit 0", output)
    assert len(made) == 2, output  # 3 prompts × 3 rows (the matrix rounds up), by both tools
    # The floor made the same 9 calls, and the span's target is printed beside its figure.
    assert "run 1 C=4 httpx: wall" in output
    assert "(a bare httpx client: " in output.split("- C=4: span ÷ ideal")[1].splitlines()[0]
    assert "Targets (Prompt Lab, medians of 1 run(s)):" in output
    assert "- RSS after 10k ÷ after 1k not measured (needs --calls or --memory-calls 10000)" in output


def test_the_side_by_side_benchmark_runs_a_file_on_two_connections_and_rows_of_different_lengths():
    database = ("--database", "promptlab_test_bench_vs_promptfoo", "--redis-url", redis_url(13))
    small = ("--tools", "promptlab", "httpx", "--runs", "1", "--calls", "6", "--latency-ms", "20")
    small += ("--memory-calls", "0")

    multi = run_bench(
        "bench_vs_promptfoo.py", "--scenario", "multi-connection", "--concurrency", "2", "4", *small, *database
    )
    ragged = run_bench("bench_vs_promptfoo.py", "--scenario", "ragged", "--concurrency", "4", *small, *database)

    # Each connection against its own ideal, and the run against the largest; 3 prompts × 2 rows on each.
    for connection in ("c2 (C=2)", "c4 (C=4)"):
        assert re.search(rf"\| {re.escape(connection)} \| promptlab \| 6 \| 20 ms \|", multi), multi
    assert re.search(r"\| the run \| httpx \| 12 \| 20 ms \| 0\.1 s \|", multi), multi
    # The rows' latencies differ, and the ideal is their list schedule (not ceil(N / C) × L).
    assert "scenario ragged" in ragged and "- C=4: span ÷ ideal" in ragged, ragged


def test_the_workers_benchmark_runs_the_command_and_a_worker_on_one_experiment():
    output = run_bench(
        "bench_experiment_workers.py",
        *("--sizes", "4:12", "--modes", "command", "1", "--ttft-ms", "20", "--tokens", "5", "--token-ms", "1"),
        # Not the benchmark's own database and Redis database, which it drops and flushes: a run of it may be on.
        *("--database", "promptlab_test_bench_workers", "--redis-url", redis_url(13)),
    )

    assert re.search(r"\| 4 \| 12 \| command \|", output), output
    assert re.search(r"\| 4 \| 12 \| 1 worker \|", output), output


def recipe_steps(target: str) -> list[list[str]]:
    """Each command of a make target's recipe that runs a script in bench/: the script and its arguments."""
    recipe = subprocess.run(["make", "-n", target], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    steps = []
    for line in recipe.splitlines():
        words = shlex.split(line)
        scripts = [at for at, word in enumerate(words) if word.startswith("bench/") and word.endswith(".py")]
        if scripts:
            steps.append(words[scripts[0] :])
    return steps


def test_every_benchmark_make_bench_quick_runs_exists_and_accepts_its_arguments():
    steps = recipe_steps("bench-quick")

    assert steps, "make -n bench-quick runs no script in bench/"
    for script, *arguments in steps:
        assert (ROOT / script).is_file(), script
        # argparse reads the arguments in order, checking each value's type and choices, and stops at --help;
        # an option it does not know would only be refused after that, so each must appear in the help.
        done = subprocess.run(
            [sys.executable, script, *arguments, "--help"], cwd=ROOT, capture_output=True, text=True, timeout=60
        )
        assert done.returncode == 0, f"{script} {arguments}: {done.stderr}"
        for option in (argument for argument in arguments if argument.startswith("--")):
            assert option in done.stdout, f"{script} has no {option}"
