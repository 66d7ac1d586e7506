"""Which answer the team chose in each round: the one rule for a round's "winning answer" (a dataset's reference).

A round's winner is the answer with the most votes when no other choice (another answer, "tie" or "all bad") has
as many; a round without votes, or with a draw at the top, has no winner.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

from compare.datasets.round_rows import rounds_save_as_rows
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


def rounds_save_as_rows_voted(
    *, workspace, user, rounds: Sequence[Round], dataset: Dataset | None = None, name: str = "", reference: bool
) -> tuple[Dataset, int]:
    """compare.datasets.round_rows.rounds_save_as_rows, with each round's winning answer as its `reference` when asked;
    returns the dataset and how many rows got a reference."""
    references = (
        {round_id: o.text for round_id, o in round_winners(r.pk for r in rounds).items()} if reference else None
    )
    saved = rounds_save_as_rows(
        workspace=workspace, user=user, rounds=rounds, dataset=dataset, name=name, references=references
    )
    return saved, len(references or {})
