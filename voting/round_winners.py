"""Which answer the team chose in each round: the one rule for a round's "winning answer" (a dataset's reference).

A round's winner is the answer with the most votes when no other choice (another answer, "tie" or "all bad") has
as many; a round without votes, or with a draw at the top, has no winner.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from compare.models import Output

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
