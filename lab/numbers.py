"""Numbers as people read them, written once for every sentence, page and app: half-up rounding, percentages,
intervals of shares, p-values and counts. The report's sentences (lab.stats.wording) and every template
(the `numbers` template library) write them through here."""

import math

from lab.stats.intervals import ALPHA

# Bounds get at most this many decimals: past it a float's digits are noise, and a bound that still reads as the
# reference share is said in words (see percent_interval).
MAX_DECIMALS = 12


def half_up(value: float, decimals: int = 0) -> float:
    """Rounded to `decimals` places with halves going up (12.5 → 13), as people round; Python's round() sends
    halves to the even neighbour (12.5 → 12)."""
    scale = 10**decimals
    return math.floor(value * scale + 0.5) / scale


def count(value: int) -> str:
    """A whole count with thousands separators: "1,000,000"."""
    return f"{value:,}"


# Scores (0–1) get at least two decimals, and more, up to this many, where two would hide a difference.
SCORE_DECIMALS = 2
MOST_SCORE_DECIMALS = 6


def places_apart(*values: float, least: int = SCORE_DECIMALS, most: int = MOST_SCORE_DECIMALS) -> int:
    """The fewest decimals, from `least` to `most`, at which values that differ are written differently
    (0.500 and 0.502 need three)."""
    for places in range(least, most + 1):
        if len({half_up(value, places) for value in values}) == len(set(values)):
            return places
    return most


def decimal(value: float, places: int = SCORE_DECIMALS) -> str:
    """A number to `places` decimals, halves up: "0.50"."""
    return f"{half_up(value, places):.{places}f}"


def decimal_interval(low: float, high: float) -> str:
    """ "0.500–0.502": bounds with as many decimals as it takes to tell them apart."""
    places = places_apart(low, high)
    return f"{decimal(low, places)}–{decimal(high, places)}"


def nonzero_decimal(value: float) -> str:
    """A difference written so that a non-zero one never reads as 0: "0.002", or "less than 0.000001"."""
    places = places_apart(0.0, value)
    if value != 0 and half_up(value, places) == 0:
        return f"less than {10**-places:.{places}f}"
    return decimal(value, places)


def percent(share: float) -> str:
    """ "13%" for 0.125 (halves up)."""
    return f"{half_up(100 * share):.0f}%"


def percent_interval(low: float, high: float, *, around: float = 0.5) -> str:
    """ "52–95%": whole percentages, with more decimals where whole ones would mislead: when both bounds would read
    the same ("29–29%"), or when rounding would move a bound onto or across `around` (50%, the share a test compares
    against), so that "50–95%" never stands for an interval that excludes 50%. A bound within float noise of
    `around` but not on it reads "just above 50%" / "just below 50%" rather than as a string of zeros."""
    for decimals in range(MAX_DECIMALS + 1):
        shown_low, shown_high = half_up(100 * low, decimals), half_up(100 * high, decimals)
        if shown_low != shown_high and all(
            _same_side(shown, 100 * true, 100 * around) for shown, true in ((shown_low, low), (shown_high, high))
        ):
            return f"{shown_low:.{decimals}f}–{shown_high:.{decimals}f}%"
    whole_low, whole_high = (f"{half_up(100 * bound):.0f}%" for bound in (low, high))
    return f"{_near(low, around) or whole_low} to {_near(high, around) or whole_high}"


def _same_side(shown: float, true: float, around: float) -> bool:
    """Whether a rounded figure sits on the same side of `around` as the figure itself (or both exactly on it)."""
    return (shown - around) * (true - around) > 0 or shown == true == around


def _near(bound: float, around: float) -> str | None:
    """ "just above 50%" for a bound that differs from `around` by less than any shown decimal; None otherwise."""
    if bound == around or abs(bound - around) * 100 >= 10**-MAX_DECIMALS:
        return None
    return f"just {'above' if bound > around else 'below'} {percent(around)}"


def p_text(p_value: float, *, alpha: float = ALPHA) -> str:
    """ "p = 0.012", or "p < 0.001" where more digits would only invite false precision. Rounding never carries a
    p-value across the significance level (0.0498 is not shown as "0.050")."""
    if p_value < 0.001:
        return "p < 0.001"
    decimals = 3
    while (round(p_value, decimals) < alpha) != (p_value < alpha):
        decimals += 1
    return f"p = {p_value:.{decimals}f}"
