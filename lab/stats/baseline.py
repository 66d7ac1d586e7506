"""The paired test for baseline regression checks (compare's experiment and dataset-run baselines): Wilcoxon
signed-rank on current − baseline per paired answer, with the report's sample guard."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from lab.stats.sample_size import ALPHA, MIN_DECISIVE_PER_PAIR, more_to_reach_minimum
from lab.stats.scores import paired_score_test


@dataclass(frozen=True)
class PairedTestResult:
    """What the test says about current − baseline over the paired answers."""

    method: str  # e.g. "Wilcoxon signed-rank"
    n_pairs: int
    n_nonzero: int
    mean_difference: float | None
    p_value: float | None
    alpha: float
    minimum: int  # non-zero differences needed before any verdict (the sample guard)
    enough: bool
    significant: bool
    more_needed: int  # non-zero differences still missing; 0 when enough


def baseline_paired_test(baseline: Mapping[str, float], current: Mapping[str, float]) -> PairedTestResult:
    """Below MIN_DECISIVE_PER_PAIR non-zero differences there is no verdict, as in every report."""
    test = paired_score_test("current", "baseline", current, baseline)
    enough = test.n_nonzero >= MIN_DECISIVE_PER_PAIR
    return PairedTestResult(
        method="Wilcoxon signed-rank",
        n_pairs=test.n_pairs,
        n_nonzero=test.n_nonzero,
        mean_difference=test.mean_difference,
        p_value=test.p_value,
        alpha=ALPHA,
        minimum=MIN_DECISIVE_PER_PAIR,
        enough=enough,
        significant=enough and test.p_value is not None and test.p_value < ALPHA,
        more_needed=more_to_reach_minimum(test.n_nonzero),
    )
