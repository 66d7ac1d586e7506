"""Win rates per variant from N-way votes, and the Wilson interval behind them."""

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.proportion import proportion_confint

from lab.stats.votes import ALL_BAD, TIE, RoundVote, encode_votes
from lab.stats.winrate import wilson_interval, win_rates

Z_975 = 1.959963984540054  # the 97.5% standard normal quantile, as printed in tables


def wilson_by_hand(successes: int, trials: int) -> tuple[float, float]:
    """Wilson (1927) score interval written out from its closed form, independent of statsmodels."""
    p, z2 = successes / trials, Z_975**2
    centre = (p + z2 / (2 * trials)) / (1 + z2 / trials)
    half = Z_975 * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials**2)) / (1 + z2 / trials)
    return centre - half, centre + half


def test_wilson_interval_matches_reference():
    # R: prop.test(8, 10, correct = FALSE)$conf.int -> 0.4901625 0.9433178
    low, high = wilson_interval(8, 10)
    assert (low, high) == pytest.approx(wilson_by_hand(8, 10), abs=1e-9)
    assert (low, high) == pytest.approx((0.4901625, 0.9433178), abs=1e-7)


@pytest.mark.parametrize(
    ("successes", "trials", "published"),
    [
        # Newcombe (1998), Stat Med 17:857, Table I, method 3 (score interval without continuity correction).
        (81, 263, (0.2553, 0.3662)),
        (15, 148, (0.0624, 0.1605)),
        (0, 20, (0.0, 0.1611)),
        (1, 29, (0.0061, 0.1718)),
    ],
)
def test_wilson_interval_matches_newcombes_published_table(successes, trials, published):
    assert wilson_interval(successes, trials) == pytest.approx(published, abs=5e-5)
    assert wilson_interval(successes, trials) == pytest.approx(wilson_by_hand(successes, trials), abs=1e-9)


def test_wilson_interval_refuses_zero_trials():
    with pytest.raises(ValueError, match="at least one trial"):
        wilson_interval(0, 0)


@settings(max_examples=100, deadline=None)
@given(st.integers(1, 5000).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))))
def test_wilson_interval_contains_the_estimate_and_stays_in_unit_interval(counts):
    successes, trials = counts
    low, high = wilson_interval(successes, trials)
    assert 0 <= low <= successes / trials <= high <= 1


def test_win_rates_count_every_outcome_of_n_way_votes():
    votes = [
        RoundVote(("a", "b", "c"), "a"),
        RoundVote(("a", "b", "c"), "a"),
        RoundVote(("a", "b", "c"), "b"),
        RoundVote(("a", "b", "c"), TIE),
        RoundVote(("a", "b", "c"), ALL_BAD),
        RoundVote(("a", "b"), "b"),
    ]
    rates = {rate.variant: rate for rate in win_rates(encode_votes(votes, ["a", "b", "c", "d"]))}

    a = rates["a"]
    assert (a.appearances, a.wins, a.losses, a.ties, a.all_bad, a.decisive) == (6, 2, 2, 1, 1, 4)
    assert a.win_rate == 0.5
    # The exact interval, the one beside the pair tests (statsmodels Clopper–Pearson).
    assert (a.ci_low, a.ci_high) == pytest.approx(proportion_confint(2, 4, alpha=0.05, method="beta"), abs=1e-12)
    c = rates["c"]
    assert (c.appearances, c.wins, c.losses, c.decisive, c.win_rate) == (5, 0, 3, 3, 0.0)
    assert c.ci_low == 0.0
    # A variant nobody has voted on yet is listed, with no rate rather than a made-up 0%.
    d = rates["d"]
    assert (d.appearances, d.decisive, d.win_rate, d.ci_low, d.ci_high) == (0, 0, None, None, None)


def test_win_rates_keep_the_comparisons_variant_order():
    votes = [RoundVote(("b", "a"), "a")]
    assert [rate.variant for rate in win_rates(encode_votes(votes, ["b", "a"]))] == ["b", "a"]
    assert [rate.variant for rate in win_rates(encode_votes(votes))] == ["b", "a"]
