"""Aggregate reads over a comparison's or a workspace's votes, run without Postgres's JIT compiler.

Counting a million votes is one scan and one hash aggregate; its planner cost passes `jit_above_cost`, and
compiling the plan then took 240–340 ms of a 1.4–1.9 s leaderboard read on the benchmark (docs/benchmarks.md),
more than it saved. `SET LOCAL` lasts until the enclosing transaction ends, so the atomic block bounds it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from django.db import connection, transaction

T = TypeVar("T")


def without_jit(read: Callable[[], T]) -> T:
    """`read()` with Postgres's JIT off for the enclosing transaction (other databases have none)."""
    if connection.vendor != "postgresql":
        return read()
    with transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET LOCAL jit = off")
        return read()
