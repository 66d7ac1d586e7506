"""Which answer the team chose in each round: the one rule for a round's "winning answer" (a dataset's reference).

A round's winner is the answer with the most votes when no other choice (another answer, "tie" or "all bad") has
as many; a round without votes, or with a draw at the top, has no winner.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from django.db.models import Max

from compare.datasets.round_rows import REFERENCE, rounds_save_as_rows
from compare.models import Dataset, Output, Round

from .models import Choice, Vote


def round_winners(round_ids: Iterable[int]) -> dict[int, Output]:
    """Round id → its winning answer, for the rounds that have one."""
    counts: dict[int, Counter] = {}
    for round_id, choice, output_id in Vote.objects.filter(round__in=list(round_ids)).values_list(
        "round_id", "choice", "output_id"
    ):
        counts.setdefault(round_id, Counter())[output_id if choice == Choice.WINNER else choice] += 1
    winners: dict[int, int] = {}
    for round_id, tally in counts.items():
        (top, votes), *rest = tally.most_common(2) + [(None, 0)]
        if isinstance(top, int) and votes > rest[0][1]:
            winners[round_id] = top
    outputs = Output.objects.in_bulk(list(winners.values()))
    return {round_id: outputs[output_id] for round_id, output_id in winners.items()}


class SavedRows(NamedTuple):
    dataset: Dataset
    added: int  # rows added: one per distinct input not yet in the dataset
    with_reference: int  # of those, the rows given a winning answer as reference
    winners: int  # rounds asked for a reference that had a clear winner


def rounds_save_as_rows_voted(
    *, workspace, user, rounds: Sequence[Round], dataset: Dataset | None = None, name: str = "", reference: bool
) -> SavedRows:
    """compare.datasets.round_rows.rounds_save_as_rows, with each round's winning answer as its `reference` when
    asked; says how many rows were added (rounds of the same input add one) and how many of them got a reference."""
    references = (
        {round_id: o.text for round_id, o in round_winners(r.pk for r in rounds).items()} if reference else None
    )
    last = (dataset.rows.aggregate(last=Max("position"))["last"] or 0) if dataset is not None else 0
    saved = rounds_save_as_rows(
        workspace=workspace, user=user, rounds=rounds, dataset=dataset, name=name, references=references
    )
    added = saved.rows.filter(position__gt=last)
    with_reference = added.filter(vars__has_key=REFERENCE).count() if references else 0
    return SavedRows(saved, added.count(), with_reference, len(references or {}))
