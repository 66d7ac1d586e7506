"""The inbox's choice rule: a comparison's need is read from its own report, and the order of candidates follows
the one sentence the page prints."""

import math

import pytest

from lab.stats.report import build_report
from lab.stats.votes import TIE, RoundVote
from voting.inbox.rule import Candidate, Need, choose, comparison_need

PAIR = ("a", "b")


def votes(a: int, b: int, ties: int = 0) -> list[RoundVote]:
    return [RoundVote(PAIR, "a")] * a + [RoundVote(PAIR, "b")] * b + [RoundVote(PAIR, TIE)] * ties


@pytest.mark.parametrize(("a", "b", "ties"), [(0, 0, 0), (5, 1, 2), (9, 0, 0), (12, 1, 0), (30, 22, 5), (10, 10, 0)])
def test_the_need_is_the_reports_verdict_and_more_votes(a, b, ties):
    cast = votes(a, b, ties)
    (pair,) = build_report(variants=list(PAIR), votes=cast)["pairs"]
    need = comparison_need(list(PAIR), cast)
    assert need.decided is pair["significant"]
    if not need.decided:
        expected = pair["more_votes"] or pair["more_decisive_votes"]
        assert need.more_votes == (expected if expected else math.inf)
        assert need.width == pytest.approx(1.0 if pair["ci_low"] is None else pair["ci_high"] - pair["ci_low"])


def test_a_level_pair_promises_no_number_of_votes():
    assert comparison_need(list(PAIR), votes(10, 10)).more_votes == math.inf


def candidate(round_id, *, decided=False, more=10, width=0.5, votes=0, held=False) -> Candidate:
    return Candidate(round_id, round_id, Need(decided, more, width), votes, held)


def test_the_order_follows_the_printed_rule():
    assert choose([candidate(1, more=30), candidate(2, more=8)]).round_id == 2  # nearest a verdict
    assert choose([candidate(1, width=0.3), candidate(2, width=0.6)]).round_id == 2  # widest interval when level
    assert choose([candidate(1, votes=3), candidate(2, votes=0)]).round_id == 2  # fewest votes
    assert choose([candidate(1, decided=True, more=0), candidate(2, more=500)]).round_id == 2  # decided last
    assert choose([candidate(1, held=True, more=1), candidate(2, decided=True)]).round_id == 2  # held by others last
    assert choose([candidate(1, held=True)]).round_id == 1  # …but served when nothing else is left
    assert choose([]) is None
