"""The kept vote counts (VoteCount) as reports and leaderboards read them, and their check against the votes.

The database keeps the counts as votes are cast, changed and deleted (triggers: vote_count_sql.py), so a report reads
a handful of rows however many votes there are, and a leaderboard one row per comparison, winner and day. Counts
hold everyone's votes: those of voters an owner excluded are read from the votes table (by the voter, a small
read) and taken off, so the figures are those of `voters.exclusions.counted` on the votes themselves.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from django.db import connection, transaction
from django.db.models import Count, QuerySet, Sum

from ..models import Vote, VoteCount
from ..vote_count_sql import count_by_kind
from ..voters.exclusions import excluded_voter_ids
from .aggregate_reads import aggregate_rows

# What tells one count row from another; the rule that puts a vote under one is vote_count_sql.py's.
KIND = ("group_id", "choice", "variant_id", "day")


def counted_kinds(
    counts: QuerySet[VoteCount],
    votes: QuerySet[Vote],
    workspace_id: int,
    fields: tuple[str, ...],
    *,
    ordered: bool = False,
) -> dict[tuple, int]:
    """How many counted votes there are per value of `fields` (some of group_id, choice, variant_id): the kept
    `counts`, less the votes of the workspace's excluded voters among `votes`, which must select the same votes as
    `counts` does from the votes table. Kinds with no counted vote are left out. `ordered`: in the order of
    `fields` (as Postgres orders them), as a GROUP BY … ORDER BY on the votes gave them."""
    rows = counts.filter(votes__gt=0).order_by().values_list(*fields).annotate(n=Sum("votes"))
    kinds = {row[:-1]: row[-1] for row in aggregate_rows(rows.order_by(*fields) if ordered else rows)}
    if voters := excluded_voter_ids(workspace_id):
        excluded = votes.filter(user_id__in=voters).order_by().values_list(*fields).annotate(n=Count("id"))
        for *key, n in excluded:
            kinds[tuple(key)] = kinds.get(tuple(key), 0) - n
    return {key: n for key, n in kinds.items() if n > 0}


def recounted() -> dict[tuple, int]:
    """The counts as the votes themselves give them, per kind (KIND): what the kept counts must equal, by the query
    that filled them when the triggers were installed (vote_count_sql.py)."""
    with connection.cursor() as cursor:
        cursor.execute(count_by_kind(connection.vendor))
        rows = cursor.fetchall()
    # SQLite's date() is text; Postgres gives a date, as the kept counts' DateField does.
    return {(group, choice, variant, _date(day)): n for group, choice, variant, day, n in rows}


def _date(day: date | str) -> date:
    return day if isinstance(day, date) else date.fromisoformat(day)


def kept(counts: QuerySet[VoteCount] | None = None) -> dict[tuple, int]:
    """The kept counts per kind (KIND), kinds at zero left out."""
    counts = VoteCount.objects.all() if counts is None else counts
    return dict((tuple(key), n) for *key, n in counts.filter(votes__gt=0).values_list(*KIND, "votes"))


@dataclass(frozen=True)
class Disagreement:
    kind: tuple  # KIND's values
    kept: int
    recounted: int


def disagreements() -> list[Disagreement]:
    """Every kind whose kept count differs from the votes' recount, both read in one snapshot of the database (on
    Postgres, unless called inside a transaction already), so votes cast meanwhile are in both or in neither."""
    snapshot = connection.vendor == "postgresql" and not connection.in_atomic_block
    with transaction.atomic():
        if snapshot:
            with connection.cursor() as cursor:
                cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ")
        stored, actual = kept(), recounted()
    return [
        Disagreement(kind, stored.get(kind, 0), actual.get(kind, 0))
        for kind in sorted(stored.keys() | actual.keys(), key=str)
        if stored.get(kind, 0) != actual.get(kind, 0)
    ]
