"""The significance level and the proportion interval every app reports the same way (voting's win rates,
compare's experiment categories); statsmodels is imported on first use, so any module may import this one."""

from __future__ import annotations

# The significance level of every test the lab reports, and the confidence of every interval beside them.
ALPHA = 0.05
CONFIDENCE = 1 - ALPHA


def wilson_interval(successes: int, trials: int, *, confidence: float = CONFIDENCE) -> tuple[float, float]:
    """Wilson score interval for a proportion (statsmodels `proportion_confint`, method="wilson").

    Wilson rather than the textbook Wald interval because it stays inside [0, 1] and keeps its coverage for small
    samples and shares near 0 or 1 — exactly the early-vote situation (Newcombe 1998, Stat Med 17:857).
    """
    if trials <= 0:
        raise ValueError("an interval needs at least one trial")
    # Imported here: statsmodels brings pandas and most of scipy, two seconds of start-up for every process that
    # loads the apps (the experiment command among them), most of which never asks for an interval.
    from statsmodels.stats.proportion import proportion_confint

    low, high = proportion_confint(successes, trials, alpha=1 - confidence, method="wilson")
    # At 0/n and n/n the exact bounds are 0 and 1; floating point lands a hair off them (5e-17 above 0 at 0/3),
    # which would leave the estimate itself outside its interval.
    return (0.0 if successes == 0 else float(low)), (1.0 if successes == trials else float(high))
