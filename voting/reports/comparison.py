"""Reads that turn stored votes into the statistics module's vote records, in the order they were cast, or into
counts per kind of vote, and a comparison's full report.

Reports and leaderboards read up to a million votes, so they read counts per kind of vote (the statistics depend
on nothing else) rather than the votes themselves: the counts the database keeps as votes change
(voting.reports.vote_counts). Where votes are read one by one (the inbox,
the vote page's rates), rows come as tuples (`values_list`), never as model objects, and votes of the same kind
(the same variants shown, the same outcome) share one record.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
from django.db.models import Count, QuerySet

from compare.models import CompareGroup, Variant
from lab.stats.ratings import MatchTable, VoteShape, coded_table
from lab.stats.report import build_report
from lab.stats.votes import ALL_BAD, TIE, RoundVote

from ..conversation_counts import group_turns
from ..models import Choice, Vote, VoteCount
from ..voters.exclusions import counted, left_out
from .aggregate_reads import aggregate_rows
from .category_shares import group_category_shares
from .judge_scores import group_judge_scores
from .vote_counts import counted_kinds

OUTCOME_OF_CHOICE = {Choice.TIE: TIE, Choice.ALL_BAD: ALL_BAD}
# "Pass" for the success-rate A/B when the caller names no threshold: a weighted judge score of at least 0.75, i.e.
# 4 or more on a 1–5 scale, 8 or more on 1–10, a pass on a binary scale.
DEFAULT_PASS_THRESHOLD = 0.75


def variant_key(variant_id: int) -> str:
    """The key a variant has in the statistics: its id as text (unique across the workspace)."""
    return str(variant_id)


def shown_by_group(variants: QuerySet[Variant]) -> dict[int, tuple[str, ...] | None]:
    """What each comparison's rounds show: the keys of all its variants (a comparison's variants are fixed once it
    has rounds, and every round runs every one of them, failed answers included: the voter saw them fail, so a
    winner beat them). One shared tuple per distinct set; None for a comparison of a single variant, which gives
    nothing to compare."""
    return shown_of(variants.order_by().values_list("group_id", "id"))


def shown_of(variants: Iterable[tuple[int, int]]) -> dict[int, tuple[str, ...] | None]:
    """shown_by_group from (comparison id, variant id) pairs already read."""
    ids_of_group: dict[int, list[int]] = {}
    for group_id, pk in variants:
        ids_of_group.setdefault(group_id, []).append(pk)
    tuples: dict[tuple[int, ...], tuple[str, ...] | None] = {}
    shown = {}
    for group_id, variant_ids in ids_of_group.items():
        ids = tuple(sorted(variant_ids))
        if ids not in tuples:
            tuples[ids] = tuple(variant_key(pk) for pk in ids) if len(ids) > 1 else None
        shown[group_id] = tuples[ids]
    return shown


def vote_records(votes: QuerySet[Vote], shown: dict[int, tuple[str, ...] | None]) -> list[RoundVote]:
    """Vote records for `votes` in the order they were cast; `shown` (see shown_by_group) must name every comparison
    they are on, and votes on a comparison shown as None are left out.

    Cast order is id order: ids come from a sequence as votes are first cast, and replacing a vote updates its row,
    so it keeps its place as the person's one vote on that round. The votes are read alone, with no join: each
    carries its comparison and its winner's variant.
    """
    # Records are immutable: votes of one kind (same comparison, same outcome) share one, made on first sight.
    records: dict[tuple[int, str, int | None], RoundVote | None] = {}

    def record(kind: tuple[int, str, int | None]) -> RoundVote | None:
        group_id, choice, winner = kind
        records[kind] = None if shown[group_id] is None else RoundVote(shown[group_id], _outcome(choice, winner))
        return records[kind]

    rows = votes.order_by("id").values_list("group_id", "choice", "variant_id")
    result = [records[kind] if kind in records else record(kind) for kind in rows]
    return [vote for vote in result if vote is not None]


def vote_shapes_of(
    votes: QuerySet[Vote], shown: dict[int, tuple[str, ...] | None], key_of: dict[str, str]
) -> Counter[VoteShape]:
    """How many of `votes` there are of each shape between the entities `key_of` rates (variant key → model or
    prompt identity; see lab.stats.ratings.vote_shapes), counted by Postgres per comparison and winner. `shown`
    as for vote_records; votes on a comparison shown as None are left out. Equal to vote_shapes(vote_records(...));
    the leaderboard reads its match table from the kept counts (kinds_table)."""
    # A tie and an all-bad vote tie the same pairs, so the winner (or none) is all a row needs besides its comparison.
    rows = votes.order_by().values_list("group_id", "variant_id").annotate(votes=Count("id"))
    return kinds_shapes({(group_id, winner): count for group_id, winner, count in aggregate_rows(rows)}, shown, key_of)


def kinds_shapes(
    kinds: dict[tuple[int, int | None], int], shown: dict[int, tuple[str, ...] | None], key_of: dict[str, str]
) -> Counter[VoteShape]:
    """vote_shapes_of on votes already counted per comparison and winner (None for a tie or an all-bad vote): a
    million votes come as one entry per comparison and winner, and no vote record is made."""
    shapes: dict[VoteShape, int] = {}
    # Per comparison, the shape of a vote for each winner it may have (a variant key, or None): made once, so the
    # tens of thousands of kinds on a large leaderboard each cost two lookups.
    shape_of: dict[int, dict[str | None, VoteShape]] = {}
    for (group_id, winner), count in kinds.items():
        if (keys := shown[group_id]) is None:
            continue
        if (by_winner := shape_of.get(group_id)) is None:
            by_winner = shape_of[group_id] = _shapes_by_winner(tuple([key_of[key] for key in keys]), keys)
        shape = by_winner[None if winner is None else variant_key(winner)]
        shapes[shape] = shapes.get(shape, 0) + count
    return Counter(shapes)


def _shapes_by_winner(entities: tuple[str, ...], keys: tuple[str, ...]) -> dict[str | None, VoteShape]:
    """A comparison's vote shapes by its winner's variant key (None for a tie or an all-bad vote)."""
    return {None: (entities, None)} | {key: (entities, position) for position, key in enumerate(keys)}


@dataclass(frozen=True)
class RatedVariants:
    """The variants of some comparisons as arrays, in the order a comparison's votes show them (by comparison, then
    by id: shown_of), with the place of what each stands for (a model, a prompt identity) in `names`, sorted."""

    groups: np.ndarray
    ids: np.ndarray
    places: np.ndarray
    names: list[str]

    @classmethod
    def of(cls, groups: Sequence[int], ids: Sequence[int], keys: Sequence[str]) -> RatedVariants:
        """From each variant's comparison id, id and rated key (in any order)."""
        names = sorted(set(keys))
        place = {name: position for position, name in enumerate(names)}
        group_array, id_array = np.array(groups, dtype=np.int64), np.array(ids, dtype=np.int64)
        order = np.lexsort((id_array, group_array))
        places = np.array([place[key] for key in keys], dtype=np.int64)
        return cls(groups=group_array[order], ids=id_array[order], places=places[order], names=names)

    def key_of(self) -> dict[str, str]:
        """Variant key → the key it is rated under."""
        return {
            variant_key(pk): self.names[place]
            for pk, place in zip(self.ids.tolist(), self.places.tolist(), strict=True)
        }


def kinds_table(kinds: dict[tuple[int, int | None], int], variants: RatedVariants) -> tuple[MatchTable, int]:
    """shape_table(kinds_shapes(kinds, shown, key_of)) for votes counted per comparison and winner (None for a tie
    or an all-bad vote) on the comparisons of `variants`, and how many votes those shapes hold (votes on a
    comparison of a single variant are left out). Worked out on arrays: no Python step per kind or per comparison,
    of which a large leaderboard has tens of thousands."""
    group_ids, starts, sizes = np.unique(variants.groups, return_index=True, return_counts=True)
    column = np.arange(len(variants.ids)) - np.repeat(starts, sizes)  # a variant's place among those shown
    shown = np.full((len(group_ids), sizes.max(initial=0)), -1, dtype=np.int64)
    shown[np.repeat(np.arange(len(group_ids)), sizes), column] = variants.places
    kind_groups, winners, counts = (
        np.array([(group, -1 if winner is None else winner, n) for (group, winner), n in kinds.items()], np.int64)
        .reshape(-1, 3)
        .T
    )
    row = np.searchsorted(group_ids, kind_groups).clip(max=max(len(group_ids) - 1, 0))
    by_id = np.argsort(variants.ids)
    winner_at = by_id[np.searchsorted(variants.ids, winners, sorter=by_id).clip(max=max(len(by_id) - 1, 0))]
    decisive = winners >= 0
    if len(kinds) and (
        len(group_ids) == 0
        or (group_ids[row] != kind_groups).any()
        or (variants.ids[winner_at] != winners)[decisive].any()
        or (variants.groups[winner_at] != kind_groups)[decisive].any()
    ):
        raise ValueError("votes on comparisons or variants not among `variants`")
    compared = sizes[row] > 1 if len(group_ids) else np.zeros(len(kind_groups), dtype=bool)
    table = coded_table(
        shown[row[compared]], np.where(decisive, column[winner_at], -1)[compared], counts[compared], variants.names
    )
    return table, int(counts[compared].sum())


def _outcome(choice: str, winner: int | None) -> str:
    return variant_key(winner) if winner is not None else OUTCOME_OF_CHOICE[choice]


@dataclass(frozen=True)
class VariantRow:
    key: str
    position: int
    label: str
    model: str


def group_variants(group: CompareGroup) -> list[VariantRow]:
    rows = group.variants.order_by("position").values_list("id", "position", "label", "model")
    return [VariantRow(variant_key(pk), position, label, model) for pk, position, label, model in rows]


def group_round_votes(group: CompareGroup, variants: list[VariantRow] | None = None) -> list[RoundVote]:
    """Every vote on the comparison's rounds, as vote records in cast order; they show its variants in position
    order. Like vote_records, for one comparison: its votes all show the same variants, so a vote's kind is its
    choice and winner alone (two columns read, not three: about 15% less time at 100,000 votes)."""
    keys = tuple(row.key for row in variants or group_variants(group))
    if len(keys) < 2:
        return []
    records: dict[tuple[str, int | None], RoundVote] = {}

    def record(kind: tuple[str, int | None]) -> RoundVote:
        records[kind] = RoundVote(keys, _outcome(*kind))
        return records[kind]

    votes = counted(Vote.objects.filter(group=group), group.workspace_id)  # excluded voters' votes left out
    rows = votes.order_by("id").values_list("choice", "variant_id")
    return [records[kind] if kind in records else record(kind) for kind in rows]


def group_vote_counts(group: CompareGroup, variants: list[VariantRow] | None = None) -> dict[RoundVote, int]:
    """How many of the comparison's counted votes there are of each kind (choice and winner), from the kept counts
    (voting.reports.vote_counts), in choice and winner order: the report's figures depend only on these counts, and a
    million votes come as a handful of rows."""
    keys = tuple(row.key for row in variants or group_variants(group))
    if len(keys) < 2:
        return {}
    kinds = counted_kinds(
        VoteCount.objects.filter(group=group),
        Vote.objects.filter(group=group),
        group.workspace_id,
        ("choice", "variant_id"),
        ordered=True,
    )
    return {RoundVote(keys, _outcome(choice, winner)): count for (choice, winner), count in kinds.items()}


def group_left_out(group: CompareGroup) -> dict:
    """The comparison's votes that its figures leave out (voters excluded from the workspace), and why."""
    return left_out(Vote.objects.filter(group=group), group.workspace_id)


def group_report(group: CompareGroup, *, pass_threshold: float = DEFAULT_PASS_THRESHOLD) -> dict:
    """The comparison's report: the statistics module's figures on its votes (and judge scores, when a judge has
    scored its answers), with the variants' labels and models and the judge the scores come from."""
    variants = group_variants(group)
    votes = group_vote_counts(group, variants)
    judged = group_judge_scores(group)
    report = build_report(
        variants=[row.key for row in variants],
        votes=votes,
        labels={row.key: row.label for row in variants},
        scores={variant_key(pk): by_round for pk, by_round in judged.scores.items()} if judged else None,
        pass_threshold=pass_threshold if judged else None,
    )
    return {
        "group": {
            "id": group.pk,
            "title": group.title,
            "variants": [
                {"key": row.key, "position": row.position, "label": row.label, "model": row.model} for row in variants
            ],
        },
        "judge": judged.describe() if judged else None,
        "categories": group_category_shares(group),
        "pass_threshold": pass_threshold,
        "left_out": group_left_out(group),
        "report": report,
        "turns": group_turns(group),
    }
