"""The one template library for figures: percentages, intervals, p-values, counts and scores, written by
lab.numbers exactly as the reports' sentences write them, and a dash where there is no figure yet."""

from django import template

from lab import numbers

register = template.Library()
NONE = "—"


@register.filter
def percent(share: float | None) -> str:
    """0.625 → "63%" (halves up)."""
    return NONE if share is None else numbers.percent(share)


@register.filter
def p_value(p: float | None) -> str:
    """0.0004 → "p < 0.001", 0.0285 → "p = 0.029"."""
    return NONE if p is None else numbers.p_text(p)


@register.filter
def count(value: int | None) -> str:
    """10000 → "10,000"."""
    return NONE if value is None else numbers.count(value)


@register.simple_tag
def interval(low: float | None, high: float | None) -> str:
    """A share's interval, "52–95%"."""
    return NONE if low is None or high is None else numbers.percent_interval(low, high)


@register.filter
def score(value: float | None) -> str:
    """A score (0–1) to two decimals: 0.5 → "0.50"."""
    return NONE if value is None else numbers.decimal(value)


@register.simple_tag
def score_interval(low: float | None, high: float | None) -> str:
    """A score's interval, with as many decimals as it takes to tell the bounds apart: "0.500–0.502"."""
    return NONE if low is None or high is None else numbers.decimal_interval(low, high)
