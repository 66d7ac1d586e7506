"""Rows of an aggregate read over a comparison's or a workspace's votes (counts per kind of vote), fetched
straight from the cursor and run without Postgres's JIT compiler.

Counting a million votes is one scan and one hash aggregate; its planner cost passes `jit_above_cost`, and
compiling the plan took 240–340 ms of a 1.4–1.9 s leaderboard read on the benchmark (docs/benchmarks.md), more
than it saved. `SET LOCAL` lasts until the enclosing transaction ends, so the atomic block bounds it. The rows are
plain values (ids, choices, counts) that need none of the ORM's per-row conversion (a workspace's read returns one
row per comparison and winner, 66,000 on the benchmark).
"""

from __future__ import annotations

from django.db import connection, transaction
from django.db.models import QuerySet


def aggregate_rows(rows: QuerySet) -> list[tuple]:
    """The rows of `rows` (a values_list queryset of ids, choices and counts) as tuples, with JIT off."""
    sql, params = rows.query.sql_with_params()
    with transaction.atomic(), connection.cursor() as cursor:
        if connection.vendor == "postgresql":
            cursor.execute("SET LOCAL jit = off")
        cursor.execute(sql, params)
        return cursor.fetchall()
