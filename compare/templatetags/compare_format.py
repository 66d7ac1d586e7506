"""Template filters of the comparison pages: timings, token counts and costs (static/js/compare/format.js writes
them the same way), and the connection of a model id."""

from decimal import Decimal

from django import template

register = template.Library()

DASH = "—"


@register.filter
def duration(ms: int | None) -> str:
    """420 → "420 ms", 1420 → "1.42 s"."""
    if ms is None:
        return DASH
    return f"{ms} ms" if ms < 1000 else f"{ms / 1000:.2f} s"


@register.filter
def tokens(count: int | None, estimated: bool = False) -> str:
    """A token count with thousands separators; "≈" marks a count the server estimated (no usage reported)."""
    if count is None:
        return DASH
    return f"≈{count:,}" if estimated else f"{count:,}"


@register.filter
def usd(cost: Decimal | float | None) -> str:
    """Dollars to four decimals, since one answer often costs a fraction of a cent."""
    if cost is None:
        return DASH
    cost = float(cost)
    if cost == 0:
        return "$0"
    if cost < 0.0001:
        return "<$0.0001"
    return f"${cost:.4f}"


@register.filter
def connection_name(model_id: str) -> str:
    """`simulated::writer?tokens=9` → "simulated": the connection that serves a composite model id."""
    return (model_id or "").partition("::")[0]
