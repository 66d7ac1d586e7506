"""Template filters for the report pages: shares, intervals and p-values in the same words as the report's
sentences (voting.stats.wording), and a dash where there is no figure yet."""

from django import template

from voting.stats.wording import p_text, percent, percent_interval

register = template.Library()
NONE = "—"


@register.filter
def as_percent(share: float | None) -> str:
    return NONE if share is None else percent(share)


@register.simple_tag
def interval(low: float | None, high: float | None) -> str:
    return NONE if low is None or high is None else percent_interval(low, high)


@register.filter
def as_p(p_value: float | None) -> str:
    return NONE if p_value is None else p_text(p_value)


@register.filter
def rating(value: float | None) -> str:
    return NONE if value is None else f"{value:,.0f}"
