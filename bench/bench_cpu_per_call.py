"""CPU per call and memory of `manage.py experiment run`: the real command in a process of its own, watched from
outside through /proc, against the fake LLM server.

The experiment is `--prompts` prompts × 1 model × rows (`--calls` answers) through one connection allowing `--limit`
requests at once, run by the command alone or spread over `--processes`. While the command runs, this process
samples the command's process tree (the command and the children it starts for --processes; a child that ended is
in its parent's reaped-children times) every 0.2 s: CPU seconds (utime + stime, all threads) and resident memory,
and counts the finished answers in the database. It prints the CPU per call from the start to the last answer and
between the 1,000th and the last answer (start-up, imports and the estimate excluded), the RSS after 1,000 and
after every answer (the results table the command prints after its last answer is left out of both), and the
load average before and after: the machine is shared, so CPU-seconds and ratios are what to compare.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/promptlab [REDIS_URL=redis://127.0.0.1:6379/0] \\
        python bench/bench_cpu_per_call.py [--calls 10000] [--limit 100] [--concurrency 32] [--processes 2]
            [-- EXTRA CLI ARGS]

It creates a database of its own beside DATABASE_URL's (bench_cpu_<name>) and drops it at the end.
Not a test: nothing is asserted; the numbers are for docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "promptlab.settings")
os.environ.setdefault("EMBEDDED_WORKER", "0")

import django  # noqa: E402
from support import bench_workspace  # noqa: E402

django.setup()


from compare.models import Output  # noqa: E402

MAX_ROWS = 1000  # an experiment file's limit: more calls need more prompts
MARK = 1000  # the early sample the last one is compared with
CLOCK = os.sysconf("SC_CLK_TCK")
PAGE = os.sysconf("SC_PAGE_SIZE")


def experiment_file(folder: Path, prompts: int, rows: int, scenario: str) -> Path:
    prompt_list = "\n".join(f"  - name: p{p}\n    prompt: 'Variant {p}: answer <<q>>'" for p in range(prompts))
    dataset = "\n".join(f"  - name: r{r}\n    vars: {{q: 'number {r}?'}}" for r in range(rows))
    path = folder / f"cpu-{rows}.yaml"
    path.write_text(
        f"name: CPU per call\nmodels:\n  - model: 'bench:fake?{scenario}'\n"
        f"prompts:\n{prompt_list}\ndataset:\n{dataset}\n"
    )
    return path


def tree(pid: int) -> list[int]:
    """The process and its descendants (worker processes the command starts)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parent = int(stat.rsplit(")", 1)[1].split()[1])
            children.setdefault(parent, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        todo.extend(children.get(current, []))
    return found


def sample(pid: int) -> tuple[float, int]:
    """CPU seconds and resident bytes of the process tree (a finished child's CPU is in its parent's c-times)."""
    cpu, rss = 0.0, 0
    for member in tree(pid):
        try:
            fields = Path(f"/proc/{member}/stat").read_text().rsplit(")", 1)[1].split()
            rss += int(Path(f"/proc/{member}/statm").read_text().split()[1]) * PAGE
        except OSError:
            continue
        utime, stime, cutime, cstime = (int(value) for value in fields[11:15])
        cpu += (utime + stime + cutime + cstime) / CLOCK
    return cpu, rss


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=10_000)
    parser.add_argument("--prompts", type=int, default=10, help="combinations per round (one per dataset row)")
    parser.add_argument("--limit", type=int, default=100, help="the connection's max_concurrency")
    parser.add_argument("--concurrency", type=int, default=10, help="the command's --concurrency (calls at once)")
    parser.add_argument("--processes", type=int, default=1, help="the command's --processes; CPU is the whole tree's")
    parser.add_argument("--ttft-ms", type=int, default=100)
    parser.add_argument("--tokens", type=int, default=20)
    parser.add_argument("--token-ms", type=int, default=5)
    parser.add_argument("--profile", metavar="FILE", help="run the command under yappi; its profile goes here")
    parser.add_argument("extra", nargs="*", help="more arguments for `experiment run` (after --)")
    args = parser.parse_args()
    with bench_workspace("bench_cpu", max_concurrency=args.limit, rpm=10_000_000) as bench:
        scenario = f"ttft_ms={args.ttft_ms}&tokens={args.tokens}&token_ms={args.token_ms}"
        rows = -(-args.calls // args.prompts)
        if rows > MAX_ROWS:
            sys.exit(f"--calls {args.calls}: at most {MAX_ROWS} rows per experiment; give more --prompts.")
        calls = rows * args.prompts
        load_before = Path("/proc/loadavg").read_text().split()[:3]
        with tempfile.TemporaryDirectory() as folder:
            path = experiment_file(Path(folder), args.prompts, rows, scenario)
            database = os.environ["DATABASE_URL"].rsplit("/", 1)[0] + f"/{bench.database}"
            env = {**os.environ, "DATABASE_URL": database, "DB_POOL_MAX_SIZE": str(args.concurrency + 8)}
            runner = ["bench/profile_command.py", args.profile] if args.profile else ["manage.py"]
            command = [sys.executable, *runner, "experiment", "run", str(path), "--workspace", "Bench"]
            command += ["--concurrency", str(args.concurrency), "--processes", str(args.processes), *args.extra]
            started = time.monotonic()
            process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            early = last = None
            peak_rss = 0
            while process.poll() is None:
                time.sleep(0.2)
                cpu, rss = sample(process.pid)
                done = Output.objects.filter(finished_at__isnull=False).count()
                peak_rss = max(peak_rss, rss)
                if early is None and done >= MARK:
                    early = (done, cpu, rss, time.monotonic() - started)
                # The sample at which the last answer was seen finished: what the command does after it (the
                # results table, which loads the page URLs and the statistics) is not a call's.
                if done and rss and (last is None or done > last[0]):
                    last = (done, cpu, rss, time.monotonic() - started)
            _, stderr = process.communicate()
        load_after = Path("/proc/loadavg").read_text().split()[:3]
        if process.returncode not in (0, 1) or last is None:
            sys.exit(f"experiment run exited {process.returncode}:\n{stderr.decode()[-3000:]}")
        done, cpu, rss, wall = last
        print(
            f"{calls} calls ({args.prompts} prompts × 1 model × {rows} rows), connection limit {args.limit}, "
            f"--concurrency {args.concurrency} --processes {args.processes} {' '.join(args.extra)}; "
            f"fake answers: {scenario}; "
            f"{os.cpu_count()} CPUs"
        )
        print(f"load average before {' '.join(load_before)}, after {' '.join(load_after)}")
        print(f"answers finished {done}/{calls} in {wall:.1f} s; CPU {cpu:.1f} s = {cpu * 1000 / done:.2f} ms per call")
        if early is not None and done > early[0]:
            steady = (cpu - early[1]) * 1000 / (done - early[0])
            print(
                f"after the first {early[0]}: {steady:.2f} ms CPU per call; RSS at {early[0]} calls "
                f"{early[2] / 2**20:.0f} MiB, at {done} calls {rss / 2**20:.0f} MiB "
                f"({rss / early[2]:.2f}×), peak {peak_rss / 2**20:.0f} MiB"
            )


if __name__ == "__main__":
    main()
