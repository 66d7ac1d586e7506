"""The inbox's choice rule, as pure functions the inbox and its benchmark (bench/bench_inbox.py) both call.

A comparison's need comes from its own report (lab.stats.report.build_report), so "decided" means exactly what
the report calls significant, and "more votes" is the report's own "N more votes needed".
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from lab.stats.report import build_report
from lab.stats.votes import RoundVote

RULE_SENTENCE = (
    "Next comes a round of the comparison nearest to a verdict — the fewest more votes its report says it needs, "
    "the widest interval first when that is level — and of its rounds the one with the fewest votes; never a round "
    "you voted on or skipped, a round someone else has open only when nothing else is left, and comparisons whose "
    "every pair already has a significant verdict last."
)


@dataclass(frozen=True, slots=True)
class Need:
    """What a comparison still needs: `decided` once every pair is significant by the report's test; otherwise
    `more_votes`, the fewest more votes the report asks for on an unsettled pair (inf when the only unsettled
    pairs are exactly level: no number of votes is promised), and `width`, the widest interval among them."""

    decided: bool
    more_votes: float
    width: float

    def key(self) -> tuple:
        return (self.decided, self.more_votes, -self.width)


def comparison_need(variants: Sequence[str], votes: Sequence[RoundVote]) -> Need:
    """The need of one comparison from its votes in cast order (the report's sign tests, Holm-adjusted)."""
    pairs = build_report(variants=variants, votes=votes, score_resamples=0)["pairs"]
    unsettled = [pair for pair in pairs if not pair["significant"]]
    if not unsettled:
        return Need(decided=True, more_votes=0, width=0.0)
    more = [pair["more_votes"] or pair["more_decisive_votes"] for pair in unsettled]
    widths = [1.0 if pair["ci_low"] is None else pair["ci_high"] - pair["ci_low"] for pair in unsettled]
    return Need(decided=False, more_votes=min((m for m in more if m), default=math.inf), width=max(widths))


@dataclass(frozen=True, slots=True)
class Candidate:
    """A round the person may be served: its comparison's need, its votes so far, whether someone else has it open
    in their inbox now, and its id (older rounds first when all else is equal)."""

    round_id: int
    group_id: int
    need: Need
    votes: int
    held_by_others: bool

    def key(self) -> tuple:
        return (self.held_by_others, *self.need.key(), self.votes, self.round_id)


def choose(candidates: Sequence[Candidate]) -> Candidate | None:
    """The round to serve next, by RULE_SENTENCE; None when nothing is left."""
    return min(candidates, key=Candidate.key, default=None)
