"""Numbers in words for the reports: percentages, intervals and p-values as a non-statistician reads them."""

import math
from collections.abc import Callable, Sequence
from dataclasses import asdict
from typing import Any

from voting.stats.sample_size import ALPHA


def half_up(value: float, decimals: int = 0) -> float:
    """Rounded to `decimals` places with halves going up (12.5 → 13), as people round; Python's round() sends
    halves to the even neighbour (12.5 → 12)."""
    scale = 10**decimals
    return math.floor(value * scale + 0.5) / scale


def percent(share: float) -> str:
    """ "13%" for 0.125."""
    return f"{half_up(100 * share):.0f}%"


def percent_interval(low: float, high: float, *, around: float = 0.5) -> str:
    """ "52–95%": whole percentages, with more decimals where whole ones would mislead: when both bounds would read
    the same ("29–29%"), or when rounding would move a bound onto or across `around` (50%, the share a test compares
    against), so that "50–95%" never stands for an interval that excludes 50%."""
    for decimals in range(4):
        shown_low, shown_high = half_up(100 * low, decimals), half_up(100 * high, decimals)
        if shown_low != shown_high and all(
            _same_side(shown, 100 * true, 100 * around) for shown, true in ((shown_low, low), (shown_high, high))
        ):
            break
    return f"{shown_low:.{decimals}f}–{shown_high:.{decimals}f}%"


def _same_side(shown: float, true: float, around: float) -> bool:
    """Whether a rounded figure sits on the same side of `around` as the figure itself (or both exactly on it)."""
    return (shown - around) * (true - around) > 0 or shown == true == around


def points(share: float) -> str:
    """A difference of two shares in percentage points, with a true minus sign: "+12 points", "−8 points"."""
    return f"{half_up(100 * share):+.0f} points".replace("-", "−").replace("+0 ", "0 ").replace("−0 ", "0 ")


def p_text(p_value: float) -> str:
    """ "p = 0.012", or "p < 0.001" where more digits would only invite false precision."""
    if p_value < 0.001:
        return "p < 0.001"
    decimals = 3
    # Never let rounding carry a p-value across the significance level, e.g. 0.0498 shown as "0.050".
    while (round(p_value, decimals) < ALPHA) != (p_value < ALPHA):
        decimals += 1
    return f"p = {p_value:.{decimals}f}"


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


def power_level(tests_in_family: int) -> str:
    """The significance level a power figure was computed at, as the guidance sentences state it."""
    return f"α = {ALPHA:g}{adjusted_for(tests_in_family)}"


def with_sentences(entries: Sequence, sentence: Callable[[Any, int], str]) -> list[dict]:
    """A report section's pair entries as dicts, each with its sentence; the entries are the whole family of pairs."""
    return [{**asdict(entry), "sentence": sentence(entry, len(entries))} for entry in entries]


def and_list(items: Sequence[str]) -> str:
    """ "A", "A and B", "A, B and C"."""
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
