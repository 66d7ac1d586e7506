"""Benchmark: one comparison's report over 1,000,000 votes, and a 50-model leaderboard over 1,000,000 votes with
its bootstrap, against the targets (300 ms and 2 s).

Each is timed whole (as the API computes it on a cache miss) and in its two parts: reading the votes as counts per
kind of vote (the selectors, from the counts the database keeps as votes are written:
voting.reports.vote_counts) and the statistics on those counts. A cache hit is timed too, and the kept counts are
checked against a recount of the votes.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/promptlab python bench/bench_report.py [--votes 1000000]

It creates a database of its own next to DATABASE_URL's (bench_report_<name>), fills it with bulk inserts and
drops it at the end; `--keep` leaves it for a later `--reuse`, which skips the minutes of filling it (and applies
any migration added since, as `manage.py migrate` would).
Results go to docs/benchmarks.md by hand, with the machine they ran on.
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "promptlab.settings")
os.environ.setdefault("EMBEDDED_WORKER", "0")

import django  # noqa: E402

django.setup()

from django.contrib.auth import get_user_model  # noqa: E402
from django.core.management import call_command  # noqa: E402
from django.db import connection  # noqa: E402
from django.db.models import Model  # noqa: E402
from django.utils import timezone  # noqa: E402

from compare.models import CompareGroup, Mode, Output, OutputStatus, Round, RoundStatus, Variant  # noqa: E402
from lab.models import Workspace  # noqa: E402
from lab.stats.ratings import table_ratings  # noqa: E402
from lab.stats.report import build_report  # noqa: E402
from voting.models import Choice, Vote  # noqa: E402
from voting.reports.cache import cached_group_report, cached_leaderboard  # noqa: E402
from voting.reports.comparison import DEFAULT_PASS_THRESHOLD, group_report, group_vote_counts, kinds_table  # noqa: E402
from voting.reports.leaderboard import (  # noqa: E402
    By,
    LeaderboardFilters,
    entities_and_variants,
    leaderboard,
    workspace_vote_counts,
    workspace_votes,
)
from voting.reports.vote_counts import counted_kinds, disagreements  # noqa: E402

REPORT_TARGET_S = 0.3
REPORT_WORKSPACE, LEADERBOARD_WORKSPACE = "Report bench", "Leaderboard bench"
LEADERBOARD_TARGET_S = 2.0
REPORT_VARIANTS = 4
REPORT_VOTERS = 5
MODELS = 50
LEADERBOARD_VOTERS = 2
ROUNDS_PER_LEADERBOARD_GROUP = 25
TIE_SHARE, ALL_BAD_SHARE = 0.08, 0.03


@dataclass(frozen=True)
class Times:
    """Wall times of the runs, fastest first, the CPU time this process spent in each, and the CPU time of its
    Postgres backend in each (read from /proc, on a server on this machine; zero where it cannot be read): CPU moves
    less with the load others put on the machine than wall time does."""

    wall: list[float]
    cpu: list[float]
    postgres: list[float]


def postgres_cpu() -> float:
    """CPU seconds this connection's Postgres backend has used, when it runs on this machine (else 0)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        pid = cursor.fetchone()[0]
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")  # utime + stime


def timed(function: Callable[[], object], repeat: int) -> tuple[Times, object]:
    """The times of `repeat` calls and the last result."""
    wall, cpu, postgres, result = [], [], [], None
    for _ in range(repeat):
        start_postgres = postgres_cpu()
        start, start_cpu = time.perf_counter(), time.process_time()
        result = function()
        wall.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
        postgres.append(postgres_cpu() - start_postgres)
    return Times(sorted(wall), cpu, postgres), result


def outcome(rng: random.Random, strengths: list[float]) -> int | str:
    """A simulated vote: tie or all bad now and then, otherwise a winner drawn by strength (Bradley–Terry odds)."""
    draw = rng.random()
    if draw < TIE_SHARE:
        return Choice.TIE
    if draw < TIE_SHARE + ALL_BAD_SHARE:
        return Choice.ALL_BAD
    return rng.choices(range(len(strengths)), weights=[math.exp(s) for s in strengths])[0]


def copy_rows(model: type[Model], rows: list[dict]) -> None:
    """Insert rows with Postgres COPY, much faster than INSERT at this size. Row values must be plain (ids, text,
    datetimes); fields a row leaves out get their model default, computed once (auto_now fields: now), so the
    rows stay valid as the models grow."""
    fields = [field for field in model._meta.concrete_fields if not field.primary_key]
    now = timezone.now()
    defaults = [
        field.get_db_prep_save(
            now if getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False) else field.get_default(),
            connection,
        )
        for field in fields
    ]
    names = [field.attname for field in fields]
    columns = ", ".join(connection.ops.quote_name(field.column) for field in fields)
    with connection.cursor() as cursor, cursor.copy(f"COPY {model._meta.db_table} ({columns}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row([row.get(name, default) for name, default in zip(names, defaults, strict=True)])


@dataclass(frozen=True)
class BenchRound:
    id: int
    group_id: int
    answers: list[tuple[int, int]]  # (output id, variant id) in variant order


def add_rounds(variants_of: dict[int, list[int]], count: int) -> list[BenchRound]:
    """`count` finished rounds of each group (id → its variant ids, in position order), each with one ok output
    per variant, in round id order."""
    now = timezone.now()
    done = {"status": RoundStatus.DONE, "started_at": now, "finished_at": now, "deadline": now}
    copy_rows(Round, [{"group_id": g, "number": n + 1, **done} for g in variants_of for n in range(count)])
    rounds = Round.objects.filter(group_id__in=variants_of).order_by("id").values_list("id", "group_id")
    copy_rows(
        Output,
        [
            {"round_id": round_id, "variant_id": variant_id, "status": OutputStatus.OK, "text": "answer"}
            for round_id, group_id in rounds
            for variant_id in variants_of[group_id]
        ],
    )
    added: dict[int, BenchRound] = {}
    for round_id, group_id, output_id, variant_id in (
        Output.objects.filter(round__group_id__in=variants_of)
        .order_by("round_id", "variant__position")
        .values_list("round_id", "round__group_id", "id", "variant_id")
    ):
        added.setdefault(round_id, BenchRound(round_id, group_id, [])).answers.append((output_id, variant_id))
    return list(added.values())


def vote_rows(
    rounds: list[BenchRound],
    users: list[int],
    strengths_of: Callable[[int], list[float]],
    rng: random.Random,
) -> list[dict]:
    """Votes as vote_cast stores them, with the comparison and the winner's variant beside the round and answer;
    strengths_of: a group's variant strengths, in variant order."""
    rows = []
    for round_ in rounds:
        strengths = strengths_of(round_.group_id)
        for user_id in users:
            choice = outcome(rng, strengths)
            row = {"round_id": round_.id, "group_id": round_.group_id, "user_id": user_id, "choice": choice}
            if isinstance(choice, int):
                output_id, variant_id = round_.answers[choice]
                row.update(choice=Choice.WINNER, output_id=output_id, variant_id=variant_id)
            rows.append(row)
    return rows


def voters(prefix: str, count: int) -> list[int]:
    return [get_user_model().objects.create(username=f"{prefix}-{i}").pk for i in range(count)]


def build_report_data(votes: int, rng: random.Random) -> CompareGroup:
    workspace = Workspace.objects.create(name=REPORT_WORKSPACE)
    group = CompareGroup.objects.create(workspace=workspace, title=f"{votes:,} votes", mode=Mode.PROMPTS)
    variants = Variant.objects.bulk_create(
        Variant(group=group, position=i + 1, label=f"v{i + 1}", model="simulated::instant", prompt=f"Prompt {i}")
        for i in range(REPORT_VARIANTS)
    )
    rounds = add_rounds({group.pk: [v.pk for v in variants]}, math.ceil(votes / REPORT_VOTERS))
    strengths = [0.0, 0.15, 0.3, 0.35]
    copy_rows(Vote, vote_rows(rounds, voters("report-voter", REPORT_VOTERS), lambda _: strengths, rng)[:votes])
    return group


def build_leaderboard_data(votes: int, rng: random.Random) -> Workspace:
    workspace = Workspace.objects.create(name=LEADERBOARD_WORKSPACE)
    strength = {f"bench::model-{m:02d}": rng.gauss(0, 0.6) for m in range(MODELS)}
    count = math.ceil(votes / (ROUNDS_PER_LEADERBOARD_GROUP * LEADERBOARD_VOTERS))
    groups = CompareGroup.objects.bulk_create(
        CompareGroup(workspace=workspace, title=f"Models {g}", mode=Mode.MODELS) for g in range(count)
    )
    variants = Variant.objects.bulk_create(
        Variant(group=group, position=i + 1, label=chr(65 + i), model=model, prompt="Same prompt.")
        for group in groups
        for i, model in enumerate(rng.sample(sorted(strength), rng.choice([2, 2, 3])))
    )
    variants_of: dict[int, list[int]] = {group.pk: [] for group in groups}
    strengths_of_group: dict[int, list[float]] = {group.pk: [] for group in groups}
    for variant in variants:
        variants_of[variant.group_id].append(variant.pk)
        strengths_of_group[variant.group_id].append(strength[variant.model])
    rounds = add_rounds(variants_of, ROUNDS_PER_LEADERBOARD_GROUP)
    rows = vote_rows(rounds, voters("board-voter", LEADERBOARD_VOTERS), strengths_of_group.__getitem__, rng)
    copy_rows(Vote, rows[:votes])
    return workspace


def line(name: str, times: Times, target: float | None = None) -> str:
    """Median and fastest of the runs (the fastest shows the cost without other load on the machine), and the
    median CPU times of this process and of its Postgres backend."""
    median = statistics.median(times.wall)
    against = f"   {median / target:5.2f} × target ({target * 1000:,.0f} ms)" if target else ""
    return (
        f"  {name:<44} median {median * 1000:8,.1f} ms   best {times.wall[0] * 1000:8,.1f} ms   "
        f"cpu {statistics.median(times.cpu) * 1000:8,.1f} ms + postgres "
        f"{statistics.median(times.postgres) * 1000:6,.0f} ms{against}"
    )


def bench_report(group: CompareGroup, repeat: int) -> None:
    print(f"Report: 1 comparison, {REPORT_VARIANTS} variants, {Vote.objects.filter(group=group).count():,} votes")
    read_s, votes = timed(lambda: group_vote_counts(group), repeat)
    keys = [str(pk) for pk in group.variants.order_by("position").values_list("pk", flat=True)]
    stats_s, _ = timed(lambda: build_report(variants=keys, votes=votes), repeat)
    whole_s, _ = timed(lambda: group_report(group), repeat)
    cached_group_report(group, pass_threshold=DEFAULT_PASS_THRESHOLD)
    hit_s, _ = timed(lambda: cached_group_report(group, pass_threshold=DEFAULT_PASS_THRESHOLD), repeat)
    print(line("read votes (selectors)", read_s))
    print(line("statistics (build_report)", stats_s))
    print(line("whole report, cache miss", whole_s, REPORT_TARGET_S))
    print(line("whole report, cache hit", hit_s, REPORT_TARGET_S))


def bench_leaderboard(workspace: Workspace, repeat: int) -> None:
    filters = LeaderboardFilters()
    count = workspace_votes(workspace, filters).count()
    print(f"Leaderboard: {MODELS} models, {CompareGroup.objects.filter(workspace=workspace).count():,} comparisons, ")
    print(f"  {count:,} votes, 200 bootstrap resamples")
    counts, votes = workspace_vote_counts(workspace, filters), workspace_votes(workspace, filters)

    def read():
        _, variants = entities_and_variants(workspace, filters, By.MODEL)
        return kinds_table(counted_kinds(counts, votes, workspace.pk, ("group_id", "variant_id")), variants)[0]

    read_s, table = timed(read, repeat)
    stats_s, _ = timed(lambda: table_ratings(table), repeat)
    whole_s, board = timed(lambda: leaderboard(workspace, by=By.MODEL, filters=filters), repeat)
    cached_leaderboard(workspace, by=By.MODEL, filters=filters)
    hit_s, _ = timed(lambda: cached_leaderboard(workspace, by=By.MODEL, filters=filters), repeat)
    print(line("read votes (selectors)", read_s))
    print(line("statistics (Bradley–Terry with bootstrap)", stats_s))
    print(line("whole leaderboard, cache miss", whole_s, LEADERBOARD_TARGET_S))
    print(line("whole leaderboard, cache hit", hit_s, LEADERBOARD_TARGET_S))
    print(f"  rated {len(board['ratings'])} models; top: {board['ratings'][0]['key']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--votes", type=int, default=1_000_000, help="votes in each of the two data sets")
    parser.add_argument("--repeat", type=int, default=5, help="timed runs of each step; the median is shown")
    parser.add_argument("--keep", action="store_true", help="keep the benchmark's database at the end")
    parser.add_argument("--reuse", action="store_true", help="use the database a run with --keep left")
    args = parser.parse_args()
    if connection.vendor != "postgresql":
        sys.exit("The benchmark needs Postgres: set DATABASE_URL (e.g. postgres://postgres@127.0.0.1:5432/promptlab).")
    connection.settings_dict.setdefault("TEST", {})["NAME"] = f"bench_report_{connection.settings_dict['NAME']}"
    original_name = connection.settings_dict["NAME"]
    if args.reuse:
        connection.close()
        connection.settings_dict["NAME"] = connection.settings_dict["TEST"]["NAME"]
    else:
        connection.creation.create_test_db(verbosity=0, autoclobber=True, serialize=False)
    try:
        with connection.cursor() as cursor:
            cursor.execute("SHOW server_version")
            postgres = cursor.fetchone()[0]
        print(
            f"# Report and leaderboard benchmark — {platform.node()}, {os.cpu_count()} CPUs, Python "
            f"{platform.python_version()}, Postgres {postgres}, load average {os.getloadavg()[0]:.1f} at the start"
        )
        if args.reuse:
            call_command("migrate", verbosity=0)
            group = CompareGroup.objects.get(workspace__name=REPORT_WORKSPACE)
            workspace = Workspace.objects.get(name=LEADERBOARD_WORKSPACE)
            print("Reused the data sets of an earlier run (--keep)\n")
        else:
            rng = random.Random(2026)
            start = time.perf_counter()
            group = build_report_data(args.votes, rng)
            workspace = build_leaderboard_data(args.votes, rng)
            with connection.cursor() as cursor:
                # Planner statistics and the visibility map, as autovacuum would leave them after such inserts.
                cursor.execute("VACUUM ANALYZE")
            print(f"Built both data sets with bulk inserts in {time.perf_counter() - start:.1f} s\n")
        start = time.perf_counter()
        apart = disagreements()
        print(
            f"Kept vote counts {'agree' if not apart else f'DISAGREE in {len(apart)} kinds'} with a recount of the "
            f"votes (checked in {time.perf_counter() - start:.1f} s)\n"
        )
        bench_report(group, args.repeat)
        print()
        bench_leaderboard(workspace, args.repeat)
        print(f"\nload average {os.getloadavg()[0]:.1f} at the end")
    finally:
        if not args.keep:
            connection.creation.destroy_test_db(original_name, verbosity=0)


if __name__ == "__main__":
    main()
