"""Reads of stored assertion results: each answer's results, and a comparison's pass rates per variant with the
paired McNemar tests between variants (lab.stats.pass_rates), as the comparison and experiment pages show them.

Blind comparisons: the section names variants by label, so the pages show it only once the labels may be seen
(the caller decides, as for every per-variant figure).
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING

from ..models import CompareGroup, Output, Round
from .models import AssertionResult

if TYPE_CHECKING:
    from lab.stats.pass_rates import PairedPassTest, PassRate


@dataclass(frozen=True)
class VariantPassRate:
    label: str
    rate: PassRate


@dataclass(frozen=True)
class PairedPass:
    a_label: str
    b_label: str
    test: PairedPassTest


@dataclass(frozen=True)
class PassRates:
    variants: list[VariantPassRate]
    pairs: list[PairedPass]
    failing_rounds: int

    @property
    def any_graded(self) -> bool:
        return any(v.rate.graded for v in self.variants)


# Types whose reason and score state the answer's latency or cost, which a blind round hides until its viewer votes.
FIGURE_TYPES = frozenset({"cost", "not-cost", "latency", "not-latency"})
HIDDEN_REASON = "Hidden in a blind round until you vote (it states a timing or a cost)."


def results_by_output(outputs: list[Output], *, figures: bool = True) -> dict[int, list[AssertionResult]]:
    """Each answer's results in order (one query for a whole round or page of rounds). Without `figures` (a blind
    round its viewer has not voted on) a cost or latency result keeps its pass but not its reason or score, as
    compare.blind hides the figures themselves."""
    found: dict[int, list[AssertionResult]] = defaultdict(list)
    for result in AssertionResult.objects.filter(output__in=[o.pk for o in outputs]).order_by("output", "position"):
        if not figures and result.type in FIGURE_TYPES:
            result.reason, result.score = HIDDEN_REASON, None
        found[result.output_id].append(result)
    return found


def group_pass_rates(group: CompareGroup) -> PassRates:
    # Imported here: scipy and statsmodels take ~0.9 s to import, and every command that loads the URLs (the
    # experiment command among them) would pay it before its first request (docs/benchmarks.md, issue 45).
    from lab.stats.pass_rates import paired_pass_tests, pass_rate

    """Per variant: answers that passed every assertion out of those graded, with a Wilson interval; per pair of
    variants: the exact McNemar test on the rounds both were graded in, Holm-adjusted over every pair."""
    variants = list(group.variants.order_by("position"))
    verdicts = Output.objects.filter(round__group=group, assertions_passed__isnull=False).values_list(
        "variant_id", "round_id", "assertions_passed"
    )
    outcomes: dict[str, dict[int, bool]] = {str(v.pk): {} for v in variants}
    for variant_id, round_id, passed in verdicts:
        outcomes[str(variant_id)][round_id] = passed
    labels = {str(v.pk): v.label for v in variants}
    rates = [
        VariantPassRate(labels[key], pass_rate(key, sum(found.values()), len(found))) for key, found in outcomes.items()
    ]
    pairs = [PairedPass(labels[test.a], labels[test.b], test) for test in paired_pass_tests(outcomes)]
    return PassRates(variants=rates, pairs=pairs, failing_rounds=failing_rounds(group).count())


def failing_rounds(group: CompareGroup):
    """Rounds with at least one answer that failed an assertion (the "only failing" filter)."""
    return Round.objects.filter(group=group, outputs__assertions_passed=False).distinct()
