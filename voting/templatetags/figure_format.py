"""Template filters for the report's per-variant figures (voting.reports.variant_figures): a mean with its spread, in
seconds, tokens or dollars; a cost no answer has a price for reads "unknown" (compare.experiments.costs)."""

from django import template

from compare.experiments.costs import money

register = template.Library()
NONE = "—"


def _spread(spread: dict | None, unit) -> str:
    """`1.42 s ± 0.31 (0.90–2.10)`: the mean ± the standard deviation, then the smallest and largest."""
    if not spread or spread["mean"] is None:
        return NONE
    text = unit(spread["mean"])
    if spread["sd"] is not None:
        text += f" ± {unit(spread['sd'])} ({unit(spread['min'])}–{unit(spread['max'])})"
    return text


@register.filter
def spread_seconds(spread: dict | None) -> str:
    return _spread(spread, lambda ms: f"{ms / 1000:.2f} s")


@register.filter
def spread_tokens(spread: dict | None) -> str:
    return _spread(spread, lambda n: f"{n:,.0f}")


@register.filter
def spread_cost(spread: dict | None) -> str:
    """Dollars per answer; "unknown" when no answer has a known price."""
    return "unknown" if spread is None else _spread(spread, money)
