"""What a judge scores and on which scale: metrics with weights, the four scales, the custom evaluator prompt.

Plain data and pure checks, shared by the models, the services and the pointwise scorer that experiments use.
Every check raises a Django ValidationError keyed by the field a person would correct.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from django.core.exceptions import ValidationError
from django.db import models

from lab.templating import placeholders

MAX_METRICS = 10
MAX_WEIGHT = 100


class Scale(models.TextChoices):
    BINARY = "binary", "Binary (0 fails, 1 passes)"
    ONE_TO_THREE = "1-3", "1 to 3"
    ONE_TO_FIVE = "1-5", "1 to 5"
    ONE_TO_TEN = "1-10", "1 to 10"


SCALE_RANGE: dict[str, tuple[int, int]] = {
    Scale.BINARY: (0, 1),
    Scale.ONE_TO_THREE: (1, 3),
    Scale.ONE_TO_FIVE: (1, 5),
    Scale.ONE_TO_TEN: (1, 10),
}


class ConversationScope(models.TextChoices):
    """What a judge judges in a later turn of a conversation (docs/conversations.md)."""

    LAST_TURN = "last_turn", "The last turn (the conversation before it is shown as context)"
    WHOLE = "whole", "The whole conversation (each column's answers in every turn)"


class JudgeMode(models.TextChoices):
    RELATIVE = "relative", "Relative (one call per metric, all answers side by side)"
    PAIRWISE = "pairwise", "Pairwise (two answers at a time, both orders)"
    POINTWISE = "pointwise", "Pointwise (one answer at a time)"


# The placeholders a custom evaluator prompt may use, with what each is filled with.
PLACEHOLDERS = {
    "prompt": "the request the answers were given",
    "response": "the answer (or the lettered answers) to judge",
    "scoring_scale": "the scale and what its ends mean",
    "metrics": "the metrics with their weights and descriptions",
    "reference": "the reference answer of the round's dataset row, when it has one (empty otherwise)",
}


@dataclass(frozen=True)
class Metric:
    name: str
    weight: float
    low: str  # what the lowest score looks like
    high: str  # what the highest score looks like

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "weight": self.weight, "low": self.low, "high": self.high}


DEFAULT_METRICS = (
    Metric(
        "Correctness",
        3,
        "Wrong or misleading facts, reasoning or code.",
        "Entirely accurate: nothing a careful expert would dispute.",
    ),
    Metric(
        "Following the instructions",
        2,
        "Ignores or contradicts what the request asked for.",
        "Does exactly what was asked and respects every stated constraint.",
    ),
    Metric(
        "Completeness",
        2,
        "Leaves out most of what the request needs.",
        "Covers everything the request needs; nothing essential is missing.",
    ),
    Metric("Clarity", 1, "Hard to follow: muddled, padded or disorganised.", "Clear, well organised, easy to follow."),
    Metric(
        "Format and tone",
        1,
        "The wrong format or a tone unsuited to the request.",
        "Format and tone fit the request and its audience.",
    ),
)


# One overall metric: for a single score and reason per answer, as experiment files ask for.
OVERALL = Metric(
    "Overall",
    1,
    "Fails the request: wrong, off-topic or unusable.",
    "Meets the request fully and excellently; nothing to improve.",
)


@dataclass(frozen=True)
class Rubric:
    """How to judge: the scale, the metrics and an optional custom evaluator prompt (`{{placeholder}}` syntax)."""

    scale: str = Scale.ONE_TO_FIVE
    metrics: tuple[Metric, ...] = DEFAULT_METRICS
    prompt: str = ""
    lenient: bool = False  # read the largest JSON object in a reply, not only a reply that is JSON

    @property
    def low(self) -> int:
        return SCALE_RANGE[self.scale][0]

    @property
    def high(self) -> int:
        return SCALE_RANGE[self.scale][1]

    def scaled(self, raw: int) -> float:
        """A raw score on this scale as a share of the way from its lowest to its highest value (0–1)."""
        return (raw - self.low) / (self.high - self.low)

    def metric(self, name: str) -> Metric:
        return next(metric for metric in self.metrics if metric.name == name)


def weights_over(judged: Iterable[Metric]) -> dict[str, float]:
    """The metrics that could be judged, each with its weight shared out over them (summing to 1): a metric the
    judge gave no usable score for leaves its weight to the others."""
    judged = list(judged)
    total = sum(metric.weight for metric in judged)
    return {metric.name: metric.weight / total for metric in judged}


def weighted_score(weights: Mapping[str, float], scores: Mapping[str, Any]) -> float:
    """An answer's overall score (0–1): its scaled score per metric (`.scaled`), weighted as `weights` says."""
    weighted = sum(weights[name] * score.scaled for name, score in scores.items())
    return min(1.0, max(0.0, weighted))  # float error must not leave 0–1


def nothing_judged(missing: Iterable[Mapping[str, str]]) -> str:
    """The error when no metric could be judged: each metric with why not."""
    return "No metric could be judged: " + "; ".join(f"{m['name']}: {m['reason']}" for m in missing)


def metrics_from_data(data: Iterable[Mapping[str, Any]]) -> tuple[Metric, ...]:
    """Metrics from stored or submitted dicts; raises ValidationError({"metrics": …}) naming the metric and field."""
    problems: list[str] = []
    metrics: list[Metric] = []
    seen: dict[str, int] = {}
    items = list(data)
    if not 1 <= len(items) <= MAX_METRICS:
        problems.append(f"A rubric has 1 to {MAX_METRICS} metrics; this has {len(items)}.")
    for position, item in enumerate(items, start=1):
        name = str(item.get("name") or "").strip()
        who = f"Metric {position}" + (f" ({name})" if name else "")
        if not name:
            problems.append(f"{who}: name: give the metric a name.")
        elif len(name) > 60:
            problems.append(f"{who}: name: at most 60 characters.")
        elif name.lower() in seen:
            problems.append(f"{who}: name: metric {seen[name.lower()]} already has this name.")
        seen.setdefault(name.lower(), position)
        weight = _weight(item.get("weight"))
        if weight is None:
            problems.append(f"{who}: weight: a number above 0 and at most {MAX_WEIGHT}.")
        low, high = (str(item.get(end) or "").strip() for end in ("low", "high"))
        if not low or not high:
            problems.append(f"{who}: low/high: say what the lowest and the highest score look like.")
        metrics.append(Metric(name, weight or 0.0, low, high))
    if problems:
        raise ValidationError({"metrics": problems})
    return tuple(metrics)


def _weight(value: Any) -> float | None:
    try:
        weight = float(value)
    except (TypeError, ValueError):
        return None
    return weight if math.isfinite(weight) and 0 < weight <= MAX_WEIGHT else None


def required_placeholders(scale: str) -> tuple[str, ...]:
    """`{{prompt}}` and `{{response}}` always; a scaled type also needs `{{scoring_scale}}` and `{{metrics}}`."""
    if scale == Scale.BINARY:
        return ("prompt", "response")
    return ("prompt", "response", "scoring_scale", "metrics")


def check_custom_prompt(prompt: str, scale: str) -> None:
    """Raise ValidationError({"prompt": …}) naming each missing or unknown placeholder; an empty prompt is fine."""
    if not prompt.strip():
        return
    used = set(placeholders(prompt))
    problems = [
        f"The custom prompt must contain {{{{{name}}}}} ({PLACEHOLDERS[name]})."
        for name in required_placeholders(scale)
        if name not in used
    ]
    problems += [
        f"{{{{{name}}}}} is not a placeholder the judge fills; use {', '.join(f'{{{{{p}}}}}' for p in PLACEHOLDERS)}."
        for name in sorted(used - set(PLACEHOLDERS))
    ]
    if problems:
        raise ValidationError({"prompt": problems})


def rubric_check(*, scale: str, metrics: Iterable[Mapping[str, Any]], prompt: str = "") -> Rubric:
    """A valid Rubric from raw input, or one ValidationError listing every problem by field."""
    errors: dict[str, list[str]] = {}
    if scale not in SCALE_RANGE:
        errors["scale"] = [f"The scale is one of: {', '.join(Scale.values)}."]
    parsed: tuple[Metric, ...] = ()
    try:
        parsed = metrics_from_data(metrics)
    except ValidationError as exc:
        errors.update(exc.message_dict)
    if scale in SCALE_RANGE:
        try:
            check_custom_prompt(prompt or "", scale)
        except ValidationError as exc:
            errors.update(exc.message_dict)
    if errors:
        raise ValidationError(errors)
    return Rubric(scale=scale, metrics=parsed, prompt=prompt or "")
