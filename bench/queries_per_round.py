"""Database queries per round of `manage.py experiment run`, counted in-process on every connection and thread.

The experiment is `--prompts` prompts × 1 model × `--rows` rows against the fake LLM server. Every statement any
thread sends is counted (through a wrapper installed on each new database connection), split by the thread that
sent it: the engine's batch database thread (the rounds' own work: claim, record, finish, cache, evaluation) and
the rest (the command's set-up, progress reads and report). It prints the count per round of each.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/promptlab [REDIS_URL=…] python bench/queries_per_round.py \\
        [--rows 50] [--prompts 10] [--cache]

It creates a database of its own beside DATABASE_URL's (bench_queries_<name>) and drops it at the end.
Not a test: nothing is asserted.
"""

from __future__ import annotations

import argparse
import collections
import io
import os
import sys
import tempfile
import threading
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "promptlab.settings")
os.environ.setdefault("EMBEDDED_WORKER", "0")

import django  # noqa: E402
from support import bench_workspace  # noqa: E402

django.setup()

from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.db.backends.signals import connection_created  # noqa: E402

counts: collections.Counter = collections.Counter()
statements: collections.Counter = collections.Counter()
lock = threading.Lock()


def _count(execute, sql, params, many, context):
    with lock:
        counts[threading.current_thread().name.split("_")[0]] += 1
        if os.environ.get("QUERIES_SQL"):
            statements[" ".join(sql.split())[:90]] += 1
    return execute(sql, params, many, context)


def _install(sender, connection, **kwargs):
    if _count not in connection.execute_wrappers:  # a wrapper object reconnects (the pool) and keeps its list
        connection.execute_wrappers.append(_count)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=50)
    parser.add_argument("--prompts", type=int, default=10)
    parser.add_argument("--cache", action="store_true", help="the experiment opts into the response cache")
    args = parser.parse_args()
    with bench_workspace("bench_queries", max_concurrency=100, rpm=10_000_000) as _bench:
        prompts = "\n".join(f"  - name: p{p}\n    prompt: 'Variant {p}: answer <<q>>'" for p in range(args.prompts))
        dataset = "\n".join(f"  - name: r{r}\n    vars: {{q: 'number {r}?'}}" for r in range(args.rows))
        cache = "cache: true\n" if args.cache else ""
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "queries.yaml"
            path.write_text(
                f"name: Queries\n{cache}models:\n  - model: 'bench:fake?ttft_ms=20&tokens=20&token_ms=1'\n"
                f"prompts:\n{prompts}\ndataset:\n{dataset}\n"
            )
            connection_created.connect(_install)
            connection.close()  # the next query opens a connection with the wrapper
            try:
                call_command("experiment", "run", str(path), "--workspace", "Bench", stdout=io.StringIO())
            except SystemExit:
                pass
            finally:
                connection_created.disconnect(_install)
        batch = sum(value for key, value in counts.items() if "batch" in key.lower())
        rest = sum(counts.values()) - batch
        print(f"{args.rows} rounds × {args.prompts} calls; threads: {dict(counts)}")
        for sql, count in statements.most_common(25):
            print(f"{count / args.rows:8.1f}  {sql}")
        print(f"queries per round: {batch / args.rows:.1f} on the rounds' thread, {rest / args.rows:.1f} elsewhere")


if __name__ == "__main__":
    main()
