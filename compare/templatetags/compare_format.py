"""Template filters of the comparison pages: timings, token counts and costs (static/js/compare/format.js writes
them the same way), and the connection of a model id."""

from dataclasses import asdict
from decimal import Decimal
from typing import Any

from django import template

from compare.experiments.costs import priced

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
def priced_sum(cost: Decimal | float | None, unpriced: int) -> str:
    """A sum of the costs that are known, saying how many it leaves out: "unknown" when none is known, never $0."""
    if cost is None:
        return "unknown" if unpriced else DASH
    return f"{usd(cost)} + {unpriced} of unknown price" if unpriced else usd(cost)


@register.filter
def answer_cost(output) -> str:
    """An answer's cost: "unknown" once it is finished without one (its model has no known price, or the provider
    reported no usage), never $0; a dash while it runs or once cancelled."""
    if output.cost is not None:
        return usd(output.cost)
    return "unknown" if output.unpriced else DASH


@register.filter
def connection_name(model_id: str) -> str:
    """`simulated::writer?tokens=9` → "simulated": the connection that serves a composite model id."""
    return (model_id or "").partition("::")[0]


def _data(value: Any) -> dict:
    """An estimate (or a part of one) as stored (a dict) or as just computed (a dataclass)."""
    if isinstance(value, dict):
        return value
    return value.as_dict() if hasattr(value, "as_dict") else asdict(value)


@register.filter
def part_cost(part: Any) -> str:
    """An estimate part's cost (a stored estimate's `answers` or `evaluations`): "unknown" when no call of it has
    a known price, else the known sum and how many calls it leaves out."""
    part = _data(part)
    return priced(part.get("cost") or 0, calls=part.get("calls") or 0, unpriced=part.get("unpriced_calls") or 0)


@register.filter
def estimate_total(estimate: Any) -> str:
    estimate = _data(estimate)
    parts = [estimate.get("answers") or {}, estimate.get("evaluations") or {}]
    unpriced = sum(p.get("unpriced_calls") or 0 for p in parts)
    return priced(estimate.get("cost") or 0, calls=estimate.get("calls") or 0, unpriced=unpriced)


@register.filter
def spent_text(progress: dict) -> str:
    """What a run has spent; calls of unknown price are counted apart, and "unknown" when nothing else was spent."""
    unpriced = progress.get("unpriced_calls") or 0
    spent = progress.get("spent") or 0
    return priced(spent, calls=unpriced + (1 if spent else 0), unpriced=unpriced)
