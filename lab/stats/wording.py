"""Numbers in words for the reports: percentages, intervals and p-values as a non-statistician reads them."""

from collections.abc import Callable, Sequence
from dataclasses import asdict
from typing import Any

# Percentages, intervals and p-values are written by the lab-wide helpers, the same on every page.
from lab.numbers import half_up, p_text, percent, percent_interval  # noqa: F401  (re-exported)
from lab.stats.sample_size import ALPHA


def points(share: float) -> str:
    """A difference of two shares in percentage points, with a true minus sign: "+12 points", "−8 points"."""
    return f"{half_up(100 * share):+.0f} points".replace("-", "−").replace("+0 ", "0 ").replace("−0 ", "0 ")


def rating_text(value: float) -> str:
    """A rating, whole and with thousands separators, halves up: "1,507"."""
    return f"{half_up(value):,.0f}"


def count_of(count: int, noun: str) -> str:
    """ "1 vote", "3 votes"."""
    return f"{count} {noun}" if count == 1 else f"{count:,} {noun}s"


def adjusted_for(tests_in_family: int) -> str:
    """ ", adjusted for 3 pairs" after a Holm-adjusted figure; nothing when the family is a single pair.

    The family is every pair of the comparison, untested ones counting as p = 1 (see `pairwise.holm`)."""
    return f", Holm-adjusted for {tests_in_family} pairs" if tests_in_family > 1 else ""


def before_adjustment(tests_in_family: int) -> str:
    """ " before adjustment" after an unadjusted figure shown in a family of several pairs."""
    return " before adjustment" if tests_in_family > 1 else ""


def power_level(tests_in_family: int, divisor: int | None = None) -> str:
    """The significance level a power figure was computed at, as the guidance sentences state it: α / `divisor`,
    the level Holm's method would test the pair at given the other pairs (`pairwise.holm_divisors`)."""
    divisor = tests_in_family if divisor is None else divisor
    if tests_in_family == 1:
        return f"α = {ALPHA:g}"
    others = tests_in_family - divisor
    level = f"α = {ALPHA:g}" if divisor == 1 else f"α/{divisor} = {ALPHA / divisor:.3g}"
    if others == 0:
        return f"{level} (Holm's first step for {tests_in_family} pairs)"
    return (
        f"{level}, the level Holm's method tests this pair at while the other {others} significant "
        f"pair{'' if others == 1 else 's'} of the {tests_in_family} stay{'s' if others == 1 else ''} significant"
    )


def with_sentences(entries: Sequence, sentence: Callable[[Any, int], str]) -> list[dict]:
    """A report section's pair entries as dicts, each with its sentence; the entries are the whole family of pairs."""
    return [{**asdict(entry), "sentence": sentence(entry, len(entries))} for entry in entries]


def and_list(items: Sequence[str]) -> str:
    """ "A", "A and B", "A, B and C"."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
