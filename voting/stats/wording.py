"""Numbers in words for the reports: percentages, intervals and p-values as a non-statistician reads them."""

from collections.abc import Callable, Sequence
from dataclasses import asdict
from typing import Any

from voting.stats.sample_size import ALPHA


def percent(share: float) -> str:
    return f"{round(100 * share)}%"


def percent_interval(low: float, high: float) -> str:
    return f"{round(100 * low)}–{round(100 * high)}%"


def points(share: float) -> str:
    """A difference of two shares in percentage points, with a true minus sign: "+12 points", "−8 points"."""
    return f"{round(100 * share):+d} points".replace("-", "−")


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
    """ ", adjusted for 3 pairs" after a Holm-adjusted figure; nothing when the family is a single pair."""
    return f", adjusted for {tests_in_family} pairs" if tests_in_family > 1 else ""


def power_level(tests_in_family: int) -> str:
    """The significance level a power figure was computed at, as the guidance sentences state it."""
    return f"α = {ALPHA:g}{adjusted_for(tests_in_family)}"


def with_sentences(entries: Sequence, sentence: Callable[[Any, int], str]) -> list[dict]:
    """A report section's pair entries as dicts, each with its sentence; the entries are the whole family of pairs."""
    return [{**asdict(entry), "sentence": sentence(entry, len(entries))} for entry in entries]
