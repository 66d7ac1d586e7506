"""The plain vote record every statistic reads, and its encoding as arrays: one row per vote, in vote order, or one
row per kind of vote with how many votes were of that kind (what a report reads from Postgres at a million votes)."""

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np

TIE = "tie"
ALL_BAD = "all_bad"
NO_WINNER = (TIE, ALL_BAD)
_NO_WINNER_KEYS = frozenset(NO_WINNER)
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
        if not _NO_WINNER_KEYS.isdisjoint(self.shown):
            raise ValueError(f"{TIE!r} and {ALL_BAD!r} are outcomes, not variant keys")
        if self.outcome not in self.shown and self.outcome not in NO_WINNER:
            raise ValueError(f"outcome {self.outcome!r} is neither a shown variant nor {TIE!r}/{ALL_BAD!r}")

    @property
    def winner(self) -> str | None:
        return None if self.outcome in NO_WINNER else self.outcome


# How many votes of each kind: what the statistics need, since every figure depends only on the set of votes.
VoteCounts = Mapping[RoundVote, int]


@dataclass(frozen=True)
class EncodedVotes:
    """Votes as arrays over `variants`: shown[i, j] is True when row i showed variant j; winner[i] is the winner's
    column, TIE_CODE or ALL_BAD_CODE; count[i] is how many votes row i stands for (1 for every row when encoded
    vote by vote, where rows keep the order the votes were given in). Every statistic weighs row i by count[i], so
    both encodings of the same votes give the same figures."""

    variants: list[str]
    shown: np.ndarray
    winner: np.ndarray
    count: np.ndarray

    @property
    def decisive(self) -> np.ndarray:
        return self.winner >= 0

    @property
    def votes(self) -> int:
        return int(self.count.sum())

    @property
    def decisive_votes(self) -> int:
        return int(self.count[self.decisive].sum())

    def shown_count(self, rows: np.ndarray | None = None) -> np.ndarray:
        """Per variant, how many votes (of `rows`, a boolean mask; all by default) showed it."""
        if rows is None:
            return self.count @ self.shown
        return self.count[rows] @ self.shown[rows]


def encode_votes(votes: Sequence[RoundVote], variants: Sequence[str] | None = None) -> EncodedVotes:
    """Encode votes for the statistics, one row per vote. `variants` fixes which variants are reported and in what
    order (variants without votes included); without it, variants appear in the order they were first shown."""
    kind_of: dict[tuple[tuple[str, ...], str], int] = {}
    rows = [kind_of.setdefault((vote.shown, vote.outcome), len(kind_of)) for vote in votes]
    kind_shown, kind_winner, variants = _encode_kinds(list(kind_of), variants)
    index = np.array(rows, dtype=np.int64)
    return EncodedVotes(
        variants=variants, shown=kind_shown[index], winner=kind_winner[index], count=np.ones(len(index), np.int64)
    )


def encode_vote_counts(counts: VoteCounts, variants: Sequence[str] | None = None) -> EncodedVotes:
    """Encode votes given as counts per kind, one row per kind (in the mapping's order); `variants` as in
    encode_votes. Kinds counted zero times are left out, as if never given."""
    kinds = [(vote.shown, vote.outcome) for vote, count in counts.items() if count > 0]
    kind_shown, kind_winner, variants = _encode_kinds(kinds, variants)
    count = np.array([count for count in counts.values() if count > 0], dtype=np.int64)
    return EncodedVotes(variants=variants, shown=kind_shown, winner=kind_winner, count=count)


def _encode_kinds(
    kinds: list[tuple[tuple[str, ...], str]], variants: Sequence[str] | None
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    seen = list(dict.fromkeys(key for shown, _ in kinds for key in shown))
    if variants is None:
        variants = seen
    elif unknown := set(seen) - set(variants):
        raise ValueError(f"votes mention variants not in the comparison: {sorted(unknown)}")
    column = {key: index for index, key in enumerate(variants)}
    kind_shown = np.zeros((len(kinds), len(variants)), dtype=bool)
    kind_winner = np.empty(len(kinds), dtype=np.int64)
    for kind, (shown, outcome) in enumerate(kinds):
        kind_shown[kind, [column[key] for key in shown]] = True
        kind_winner[kind] = TIE_CODE if outcome == TIE else ALL_BAD_CODE if outcome == ALL_BAD else column[outcome]
    return kind_shown, kind_winner, list(variants)
