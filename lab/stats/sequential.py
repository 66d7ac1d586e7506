"""Peek-safe sequential testing: an always-valid p-value for "A and B are equally preferred" and an always-valid
confidence interval (a confidence sequence) for A's share of wins, both of which may be read after every vote.

Model: decisive outcomes are Bernoulli(p) with p = P(A beats B). Mixing the alternative over a Beta(c, c) prior
gives, after n outcomes with s wins for A, the likelihood ratio against any fixed share q

    Λₙ(q) = B(c + s, c + n − s) / B(c, c) / (qˢ (1 − q)ⁿ⁻ˢ)

which is a non-negative martingale with mean 1 when q is the true share, so by Ville's inequality
P(Λₙ(q) ≥ 1/α for some n) ≤ α: a mixture sequential probability ratio test (mSPRT; Robbins 1970; Johari et al.
2017, "Peeking at A/B tests"; as a confidence sequence, Howard, Ramdas, McAuliffe & Sekhon 2021, "Time-uniform,
nonparametric, nonasymptotic confidence sequences", Ann. Statist. 49:1055, the beta-binomial mixture).

- always-valid p-value: pₙ = min(1, 1/Λₙ(0.5)). However often it is checked, the chance that it is ever below α
  when there is no difference is at most α.
- always-valid interval: every q with Λₙ(q) < 1/α. The chance that it ever excludes the true share is at most α,
  and it excludes 0.5 exactly when pₙ < α, so the interval and the p-value always agree.

Both are read from the current counts only, so they do not depend on the order the votes were stored in. (A
running minimum of pₙ is also valid and can be smaller, but it depends on the order of the votes; someone who stops
the first time pₙ < α gets the same answer from either.)
"""

import math

import numpy as np
from scipy.optimize import brentq
from scipy.special import betaln, xlog1py, xlogy

from lab.stats.sample_size import ALPHA

# Beta(5, 5) puts most prior weight on win shares between about 0.2 and 0.8, the differences prompt and model
# comparisons actually show; flatter priors react more slowly to moderate differences, tighter ones to large ones.
DEFAULT_PRIOR_STRENGTH = 5.0

WHICH_P_TO_TRUST = (
    "Two p-values are shown. Trust the fixed-sample p-value only if you decided how many votes to collect before "
    "starting and you look at the result once, at the end. If you check the report as votes come in, or would stop "
    "as soon as it looks significant, trust the peek-safe (always-valid) p-value and the always-valid interval "
    "beside it: they stay honest however often you look. The price is votes: at the same counts the peek-safe "
    "p-value is never smaller than the fixed-sample one, and the always-valid interval always contains the exact "
    "one (checked for every count up to 1,000 decisive votes), so it takes more votes to show a difference."
)


def log_mixture_ratio(
    a_wins: np.ndarray | int, n: np.ndarray | int, share: float, *, prior_strength: float = DEFAULT_PRIOR_STRENGTH
) -> np.ndarray:
    """log Λₙ(share): the Beta(c, c) mixture's likelihood over that of a fixed `share`, after `a_wins` of `n`."""
    if prior_strength <= 0:
        raise ValueError("prior_strength must be positive")
    a_wins, n = np.asarray(a_wins, dtype=float), np.asarray(n, dtype=float)
    mixture = betaln(prior_strength + a_wins, prior_strength + n - a_wins) - betaln(prior_strength, prior_strength)
    return mixture - xlogy(a_wins, share) - xlog1py(n - a_wins, -share)


def always_valid_p_values(a_won, *, prior_strength: float = DEFAULT_PRIOR_STRENGTH) -> np.ndarray:
    """The always-valid p-value after each decisive outcome, in order (`a_won[i]` is True when A won the i-th)."""
    outcomes = np.asarray(a_won, dtype=bool)
    n = np.arange(1, len(outcomes) + 1)
    log_ratio = log_mixture_ratio(np.cumsum(outcomes), n, 0.5, prior_strength=prior_strength)
    return np.minimum(1.0, np.exp(-log_ratio))


def always_valid_p(a_wins: int, decisive: int, *, prior_strength: float = DEFAULT_PRIOR_STRENGTH) -> float:
    """The always-valid p-value after `a_wins` of `decisive` outcomes (1.0 before the first one)."""
    log_ratio = log_mixture_ratio(a_wins, decisive, 0.5, prior_strength=prior_strength)
    return float(min(1.0, math.exp(-float(log_ratio))))


def always_valid_interval(
    a_wins: int, decisive: int, *, alpha: float = ALPHA, prior_strength: float = DEFAULT_PRIOR_STRENGTH
) -> tuple[float, float]:
    """The always-valid 1 − α interval for A's share of wins: every share q with Λₙ(q) < 1/α (0 to 1 with no data).

    log Λₙ(q) is convex in q with its minimum at q = s/n, where it is below 0 (the mixture never beats the best
    fixed share), so the set is one interval around s/n, found on each side by root finding (scipy `brentq`).
    """
    if decisive == 0:
        return 0.0, 1.0
    threshold = math.log(1 / alpha)

    def excess(share: float) -> float:
        return float(log_mixture_ratio(a_wins, decisive, share, prior_strength=prior_strength)) - threshold

    estimate = a_wins / decisive
    low = 0.0 if a_wins == 0 or excess(EDGE) < 0 else brentq(excess, EDGE, estimate, xtol=1e-12)
    high = 1.0 if a_wins == decisive or excess(1 - EDGE) < 0 else brentq(excess, estimate, 1 - EDGE, xtol=1e-12)
    return float(low), float(high)


# Root finding stays this far inside (0, 1), where log q is finite; a bound closer to the edge is reported as 0 or 1.
EDGE = 1e-12
