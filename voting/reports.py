"""Reads that turn stored votes into the statistics module's vote records, in the order they were cast, and a
comparison's full report.

Reports read up to hundreds of thousands of votes, so rows come as tuples (`values_list`), never as model objects,
and votes of the same kind (the same variants shown, the same outcome) share one record.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import QuerySet

from compare.models import CompareGroup, Output
from voting.stats.report import build_report
from voting.stats.votes import ALL_BAD, TIE, RoundVote

from .judge_scores import group_judge_scores
from .models import Choice, Vote

OUTCOME_OF_CHOICE = {Choice.TIE: TIE, Choice.ALL_BAD: ALL_BAD}
# "Pass" for the success-rate A/B when the caller names no threshold: a weighted judge score of at least 0.75, i.e.
# 4 or more on a 1–5 scale, 8 or more on 1–10, a pass on a binary scale.
DEFAULT_PASS_THRESHOLD = 0.75


def variant_key(variant_id: int) -> str:
    """The key a variant has in the statistics: its id as text (unique across the workspace)."""
    return str(variant_id)


def round_votes(votes: QuerySet[Vote], outputs: QuerySet[Output]) -> list[RoundVote]:
    """Vote records for `votes` in the order they were cast; `outputs` must include every output of their rounds.

    A round "shows" every variant it ran, failed answers included: the voter saw them fail, so a winner beat them.
    Cast order is id order: ids come from a sequence as votes are first cast, and replacing a vote updates its row,
    so it keeps its place as the person's one vote on that round.
    """
    # Two plain scans, unordered and unjoined: far cheaper in Postgres than a join and a sort of 100,000 rows.
    output_rows = outputs.order_by().values_list("id", "round_id", "variant_id")
    variant_of_output: dict[int, int] = {}
    variants_of_round: dict[int, list[int]] = {}
    for output_id, round_id, variant_id in output_rows:
        variant_of_output[output_id] = variant_id
        variants_of_round.setdefault(round_id, []).append(variant_id)
    shown = _shown_by_round(variants_of_round)
    # Records are immutable: votes of one kind (same variants shown, same outcome) share one.
    records: dict[tuple[tuple[str, ...] | None, str], RoundVote | None] = {}
    record_of_winner: dict[int, RoundVote | None] = {}  # a shortcut by the winning output
    result = []
    for round_id, choice, output_id in votes.order_by("id").values_list("round_id", "choice", "output_id"):
        record = record_of_winner.get(output_id) if output_id is not None else None
        if record is None:
            outcome = variant_key(variant_of_output[output_id]) if output_id is not None else OUTCOME_OF_CHOICE[choice]
            kind = (shown.get(round_id), outcome)
            if kind not in records:
                records[kind] = None if kind[0] is None else RoundVote(shown=kind[0], outcome=outcome)
            record = records[kind]
            if output_id is not None:
                record_of_winner[output_id] = record
        if record is not None:
            result.append(record)
    return result


def _shown_by_round(variants_of_round: dict[int, list[int]]) -> dict[int, tuple[str, ...] | None]:
    """Each round's shown variant keys, one shared tuple per distinct set; None for a round with a single answer,
    which gives nothing to compare."""
    tuples: dict[tuple[int, ...], tuple[str, ...] | None] = {}
    shown = {}
    for round_id, variant_ids in variants_of_round.items():
        ids = tuple(sorted(variant_ids))
        if ids not in tuples:
            tuples[ids] = tuple(variant_key(pk) for pk in ids) if len(ids) > 1 else None
        shown[round_id] = tuples[ids]
    return shown


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
    """Every vote on the comparison's rounds, as vote records in cast order."""
    keys = tuple(row.key for row in variants or group_variants(group))
    if len(keys) < 2:
        return []
    # Every round of a comparison runs every variant (a group's variants are fixed once it has rounds), so what a
    # round showed is known without reading its answers; only a winner's variant is looked up, in the same query.
    records: dict[str, RoundVote] = {}
    result = []
    rows = Vote.objects.filter(round__group=group).order_by("id").values_list("choice", "output__variant_id")
    for choice, winner in rows:
        outcome = variant_key(winner) if winner is not None else OUTCOME_OF_CHOICE[choice]
        if outcome not in records:
            records[outcome] = RoundVote(shown=keys, outcome=outcome)
        result.append(records[outcome])
    return result


def group_report(group: CompareGroup, *, pass_threshold: float = DEFAULT_PASS_THRESHOLD) -> dict:
    """The comparison's report: the statistics module's figures on its votes (and judge scores, when a judge has
    scored its answers), with the variants' labels and models and the judge the scores come from."""
    variants = group_variants(group)
    votes = group_round_votes(group, variants)
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
        "pass_threshold": pass_threshold,
        "report": report,
    }
