"""The plain vote record every statistic reads, and its encoding as arrays (one row per vote, in vote order)."""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

TIE = "tie"
ALL_BAD = "all_bad"
NO_WINNER = (TIE, ALL_BAD)
# Codes in EncodedVotes.winner for votes without a winner; winners are coded by their variant's position (>= 0).
TIE_CODE = -1
ALL_BAD_CODE = -2


@dataclass(frozen=True, slots=True)
class RoundVote:
    """One person's vote on one round: the variant keys shown (in any order) and a winner key, TIE or ALL_BAD."""

    shown: tuple[str, ...]
    outcome: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "shown", tuple(self.shown))
        if len(self.shown) < 2 or len(set(self.shown)) != len(self.shown):
            raise ValueError(f"a vote needs at least two distinct variants shown, got {self.shown!r}")
        if any(key in NO_WINNER for key in self.shown):
            raise ValueError(f"{TIE!r} and {ALL_BAD!r} are outcomes, not variant keys")
        if self.outcome not in self.shown and self.outcome not in NO_WINNER:
            raise ValueError(f"outcome {self.outcome!r} is neither a shown variant nor {TIE!r}/{ALL_BAD!r}")

    @property
    def winner(self) -> str | None:
        return None if self.outcome in NO_WINNER else self.outcome


@dataclass(frozen=True)
class EncodedVotes:
    """Votes as arrays over `variants`: shown[i, j] is True when vote i showed variant j; winner[i] is the winner's
    column, TIE_CODE or ALL_BAD_CODE. Rows keep the order the votes were given in (the order they were cast)."""

    variants: list[str]
    shown: np.ndarray
    winner: np.ndarray

    @property
    def decisive(self) -> np.ndarray:
        return self.winner >= 0


def encode_votes(votes: Sequence[RoundVote], variants: Sequence[str] | None = None) -> EncodedVotes:
    """Encode votes for the statistics. `variants` fixes which variants are reported and in what order (variants
    without votes included); without it, variants appear in the order they were first shown."""
    kind_of: dict[tuple[tuple[str, ...], str], int] = {}
    rows = [kind_of.setdefault((vote.shown, vote.outcome), len(kind_of)) for vote in votes]
    seen = list(dict.fromkeys(key for shown, _ in kind_of for key in shown))
    if variants is None:
        variants = seen
    elif unknown := set(seen) - set(variants):
        raise ValueError(f"votes mention variants not in the comparison: {sorted(unknown)}")
    column = {key: index for index, key in enumerate(variants)}
    kind_shown = np.zeros((len(kind_of), len(variants)), dtype=bool)
    kind_winner = np.empty(len(kind_of), dtype=np.int64)
    for kind, (shown, outcome) in enumerate(kind_of):
        kind_shown[kind, [column[key] for key in shown]] = True
        kind_winner[kind] = TIE_CODE if outcome == TIE else ALL_BAD_CODE if outcome == ALL_BAD else column[outcome]
    index = np.array(rows, dtype=np.int64)
    return EncodedVotes(variants=list(variants), shown=kind_shown[index], winner=kind_winner[index])
