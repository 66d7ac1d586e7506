"""What the report says about its two p-values is true: at the same counts the peek-safe p is never smaller than
the fixed-sample (exact sign test) p, and the always-valid interval contains the exact Clopper–Pearson one, for
every count up to 1,000 decisive votes."""

from pathlib import Path

import numpy as np
import pytest
from scipy.stats import beta, binom, binomtest

from lab.stats.sequential import WHICH_P_TO_TRUST, always_valid_interval, always_valid_p, log_mixture_ratio
from lab.stats.winrate import exact_interval

MOST = 1000
DOCS = Path(__file__).resolve().parents[2] / "docs" / "statistics.md"


def every_count() -> tuple[np.ndarray, np.ndarray]:
    n = np.concatenate([np.full(total + 1, total) for total in range(1, MOST + 1)])
    wins = np.concatenate([np.arange(total + 1) for total in range(1, MOST + 1)])
    return wins, n


def test_the_peek_safe_p_is_never_below_the_fixed_sample_p_at_the_same_counts():
    wins, n = every_count()
    # The exact two-sided sign test against 0.5: twice the smaller tail, capped at 1 (scipy's binomtest, checked
    # against it on a sample below).
    fixed = np.minimum(1, 2 * np.minimum(binom.cdf(wins, n, 0.5), binom.sf(wins - 1, n, 0.5)))
    peek_safe = np.minimum(1, np.exp(-log_mixture_ratio(wins, n, 0.5)))
    assert len(n) == 501_500
    assert (peek_safe >= fixed).all()
    rng = np.random.default_rng(0)
    for index in rng.choice(len(n), 200, replace=False):
        a, total = int(wins[index]), int(n[index])
        assert fixed[index] == pytest.approx(binomtest(a, total, 0.5).pvalue, rel=1e-9, abs=1e-15)
        assert always_valid_p(a, total) == pytest.approx(peek_safe[index], rel=1e-12)


def test_the_always_valid_interval_contains_the_exact_one_at_every_count():
    wins, n = every_count()
    low = np.where(wins == 0, 0.0, beta.ppf(0.025, np.maximum(wins, 1), n - wins + 1))
    high = np.where(wins == n, 1.0, beta.ppf(0.975, wins + 1, np.maximum(n - wins, 1)))
    # The always-valid interval is every share q with log Λ(q) < log 20, one interval around wins / n: it contains
    # the exact one exactly when both exact bounds are in it (up to rounding where they coincide, at 1 of 1).
    threshold = np.log(20) + 1e-9
    inside_low = (wins == 0) | (log_mixture_ratio(wins, n, np.maximum(low, 1e-300)) < threshold)
    inside_high = (wins == n) | (log_mixture_ratio(wins, n, np.minimum(high, 1 - 1e-16)) < threshold)
    assert (inside_low & inside_high).all()
    for a, total in [(1, 1), (9, 11), (15, 20), (520, 1000)]:
        (av_low, av_high), (cp_low, cp_high) = always_valid_interval(a, total), exact_interval(a, total)
        assert av_low <= cp_low + 1e-12 and cp_high <= av_high + 1e-12


def test_the_report_and_the_docs_say_so_rather_than_neither_is_larger():
    assert "never smaller than the fixed-sample one" in WHICH_P_TO_TRUST
    docs = DOCS.read_text()
    assert "Neither figure is always larger" not in docs
    assert "never smaller than the fixed-sample p" in docs
