"""How an experiment's costs read, on the command line and the pages: a cost that is not known is "unknown",
and a sum that leaves out calls of unknown price says how many; never a $0 that only means "no price"."""

from __future__ import annotations

from decimal import Decimal


def count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def money(value: float | Decimal | None) -> str:
    if value is None:
        return "unknown"
    return f"${value:.6f}" if value < 0.01 else f"${value:.4f}" if value < 1 else f"${value:,.2f}"


def priced(cost: float | Decimal, *, calls: int, unpriced: int) -> str:
    """A sum of costs that leaves out the calls of unknown price, saying how many: "unknown" when all are."""
    if calls and unpriced >= calls:
        return "unknown"
    if unpriced:
        return f"{money(cost)} + {count(unpriced, 'call')} of unknown price"
    return money(cost)
