"""Peek-safe sequential testing: an always-valid p-value for "A and B are equally preferred" that may be read after
every vote (a mixture sequential probability ratio test, mSPRT).

Model: decisive outcomes are Bernoulli(p) with p = P(A beats B); the null is p = 0.5. Mixing the alternative over
a Beta(c, c) prior gives the likelihood ratio after n outcomes with s wins for A

    Λₙ = B(c + s, c + n − s) / B(c, c) / 0.5ⁿ

which is a non-negative martingale with mean 1 under the null, so by Ville's inequality P(Λₙ ≥ 1/α for some n) ≤ α.
The always-valid p-value pₙ = min(1, min over m ≤ n of 1/Λₘ) may therefore be checked after every vote: the chance
it ever drops below α when there is no difference is at most α (Johari et al. 2017, "Peeking at A/B tests").
"""

from collections.abc import Sequence

import numpy as np
from scipy.special import betaln

# Beta(5, 5) puts most prior weight on win shares between about 0.2 and 0.8, the differences prompt and model
# comparisons actually show; flatter priors react more slowly to moderate differences, tighter ones to large ones.
DEFAULT_PRIOR_STRENGTH = 5.0

WHICH_P_TO_TRUST = (
    "Two p-values are shown. Trust the fixed-sample p-value only if you decided how many votes to collect before "
    "starting and you look at the result once, at the end. If you check the report as votes come in, or would stop "
    "as soon as it looks significant, trust the peek-safe (always-valid) p-value: it stays honest however often "
    "you look, at the price of needing somewhat more votes."
)


def always_valid_p_values(a_won: Sequence[bool], *, prior_strength: float = DEFAULT_PRIOR_STRENGTH) -> np.ndarray:
    """The always-valid p-value after each decisive outcome, in order (`a_won[i]` is True when A won the i-th)."""
    if prior_strength <= 0:
        raise ValueError("prior_strength must be positive")
    outcomes = np.asarray(a_won, dtype=bool)
    n = np.arange(1, len(outcomes) + 1)
    a_wins = np.cumsum(outcomes)
    log_ratio = (
        betaln(prior_strength + a_wins, prior_strength + n - a_wins)
        - betaln(prior_strength, prior_strength)
        + n * np.log(2.0)
    )
    return np.minimum(1.0, np.minimum.accumulate(np.exp(-log_ratio)))


def always_valid_p(a_won: Sequence[bool], *, prior_strength: float = DEFAULT_PRIOR_STRENGTH) -> float:
    """The always-valid p-value after all the decisive outcomes so far (1.0 before the first one)."""
    path = always_valid_p_values(a_won, prior_strength=prior_strength)
    return float(path[-1]) if len(path) else 1.0
