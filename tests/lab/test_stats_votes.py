"""The vote record and its array encoding: bad votes are refused, good ones keep their order."""

import numpy as np
import pytest

from lab.stats.votes import ALL_BAD_CODE, TIE, TIE_CODE, RoundVote, encode_votes


@pytest.mark.parametrize(
    ("shown", "outcome", "message"),
    [
        (("a",), "a", "two distinct"),
        (("a", "a"), "a", "two distinct"),
        (("a", "tie"), "a", "outcomes, not variant keys"),
        (("a", "b"), "c", "neither a shown variant"),
    ],
)
def test_it_refuses_a_malformed_vote(shown, outcome, message):
    with pytest.raises(ValueError, match=message):
        RoundVote(shown, outcome)


def test_it_refuses_votes_for_variants_outside_the_comparison():
    with pytest.raises(ValueError, match=r"not in the comparison: \['c'\]"):
        encode_votes([RoundVote(("a", "c"), "a")], ["a", "b"])


def test_encoding_keeps_vote_order_and_codes_outcomes():
    votes = [RoundVote(["b", "a"], "b"), RoundVote(("a", "b", "c"), TIE), RoundVote(("c", "a"), "all_bad")]
    encoded = encode_votes(votes, ["a", "b", "c"])
    assert encoded.shown.tolist() == [[True, True, False], [True, True, True], [True, False, True]]
    assert encoded.winner.tolist() == [1, TIE_CODE, ALL_BAD_CODE]
    assert np.array_equal(encoded.decisive, [True, False, False])
