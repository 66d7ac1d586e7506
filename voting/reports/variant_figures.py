"""Each variant's answers in figures, shown in the comparison's report beside its win rates so a team can weigh
quality against speed and cost: the mean and spread of latency, output tokens and cost, and how consistent its
answers were over repeated rounds.

Over the variant's complete answers (status ok). Spread: the sample standard deviation (n − 1; none below two
answers) with the smallest and largest value. Cost counts the answers whose price is known; the others are counted
apart (`unpriced`), and a variant none of whose answers has a price has no cost figures — null, shown as
"unknown", never $0. Consistency: the answers grouped by their text (surrounding whitespace aside), the largest
group first; `distinct` is how many different answers it gave.

Read fresh on every request (not from the report's cache, which only votes and verdicts invalidate): a round that
finishes changes these figures.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from decimal import Decimal
from statistics import fmean, stdev

from compare.models import CompareGroup, Output, OutputStatus

from .comparison import variant_key

EXCERPT_CHARS = 200  # of an answer's text, per group of identical answers


@dataclass(frozen=True)
class Spread:
    n: int
    mean: float | None
    sd: float | None  # sample standard deviation; None below two values
    min: float | None
    max: float | None

    @classmethod
    def of(cls, values: list[float]) -> Spread:
        if not values:
            return cls(0, None, None, None, None)
        sd = stdev(values) if len(values) > 1 else None
        return cls(len(values), fmean(values), sd, min(values), max(values))

    def as_dict(self) -> dict:
        return {"n": self.n, "mean": self.mean, "sd": self.sd, "min": self.min, "max": self.max}


def group_variant_figures(group: CompareGroup, variants: list[dict]) -> list[dict]:
    """Per variant of `variants` (the report's: key, label, model, in position order): its answers' latency, output
    tokens and cost (each a Spread), how many answers have no known price, and how consistent its answers were.
    One query."""
    answers: dict[str, list[tuple[int | None, int | None, Decimal | None, str]]] = {}
    rows = Output.objects.filter(round__group=group, status=OutputStatus.OK).values_list(
        "variant_id", "latency_ms", "output_tokens", "cost", "text"
    )
    for variant_id, latency_ms, output_tokens, cost, text in rows.order_by("round__number"):
        answers.setdefault(variant_key(variant_id), []).append((latency_ms, output_tokens, cost, text))
    return [_figures(v["key"], v["label"], v["model"], answers.get(v["key"], [])) for v in variants]


def _figures(key: str, label: str, model: str, answers: list) -> dict:
    costs = [float(cost) for _, _, cost, _ in answers if cost is not None]
    return {
        "variant": key,
        "label": label,
        "model": model,
        "answers": len(answers),
        "latency_ms": Spread.of([float(ms) for ms, _, _, _ in answers if ms is not None]).as_dict(),
        "output_tokens": Spread.of([float(n) for _, n, _, _ in answers if n is not None]).as_dict(),
        # None, not zeros, when no answer has a known price: "unknown" wherever it is shown.
        "cost": Spread.of(costs).as_dict() if costs else None,
        "unpriced": len(answers) - len(costs),
        "consistency": consistency([text for _, _, _, text in answers]),
    }


def consistency(texts: list[str]) -> dict:
    """How many different answers among these, and each with how many times it was given, most often first (ties
    in the order first given)."""
    counts = Counter(text.strip() for text in texts)
    total = len(texts)
    groups = [
        {"count": count, "share": count / total, "text": text[:EXCERPT_CHARS], "cut": len(text) > EXCERPT_CHARS}
        for text, count in sorted(counts.items(), key=lambda item: -item[1])
    ]
    return {"answers": total, "distinct": len(counts), "groups": groups}
