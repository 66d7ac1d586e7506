"""Classification judges, after Evidently's LLM-judge templates: each answer is put in one category, not scored.

- **binary classification**: criteria, a target and a non-target category (e.g. "concise" / "verbose"), and what
  an uncertain judge answers: UNKNOWN, the target or the non-target.
- **multiclass classification**: criteria and categories, each with a description.

Both may ask for the judge's reasoning and a score (its confidence, 0–1), and may show any of the round's dataset
columns (`input_columns`) next to the answer; the criteria can name them as `{{column}}`, filled by the one
renderer (lab.templating). Each answer is classified on its own, in one call with one retry, against a JSON
schema whose `category` is an enum of the categories. The report counts each variant's answers per category.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ValidationError
from django.db import models

from lab.templating import placeholders, render

from .prompts import REASON, JudgePrompt, _closed, _defanged, _messages
from .replies import BadReply, parse_json

UNKNOWN = "UNKNOWN"
MAX_CATEGORIES = 10


class JudgeKind(models.TextChoices):
    RUBRIC = "rubric", "Rubric (scores)"
    BINARY = "binary_classification", "Binary classification"
    MULTICLASS = "multiclass_classification", "Multiclass classification"


class Uncertainty(models.TextChoices):
    UNKNOWN = "unknown", "Answer UNKNOWN"
    TARGET = "target", "Answer the target category"
    NON_TARGET = "non_target", "Answer the non-target category"


@dataclass(frozen=True)
class Category:
    name: str
    description: str = ""


@dataclass(frozen=True)
class Classifier:
    kind: str
    criteria: str
    categories: tuple[Category, ...]  # binary: (target, non-target)
    uncertainty: str = Uncertainty.UNKNOWN
    include_reasoning: bool = True
    include_score: bool = False
    input_columns: tuple[str, ...] = ()
    lenient: bool = False

    @property
    def labels(self) -> list[str]:
        """What the judge may answer: the categories, and UNKNOWN when an uncertain judge says so."""
        names = [category.name for category in self.categories]
        return [*names, UNKNOWN] if self.uncertainty == Uncertainty.UNKNOWN else names

    @property
    def target(self) -> str:
        return self.categories[0].name if self.kind == JudgeKind.BINARY else ""

    def as_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "criteria": self.criteria,
            "uncertainty": self.uncertainty,
            "include_reasoning": self.include_reasoning,
            "include_score": self.include_score,
        }
        if self.kind == JudgeKind.BINARY:
            target, non_target = self.categories
            data |= {"target": target.name, "non_target": non_target.name}
        else:
            data["categories"] = [{"name": c.name, "description": c.description} for c in self.categories]
        return data


def classifier_check(
    *, kind: str, data: Mapping[str, Any], input_columns: list[str] | tuple[str, ...] = (), lenient: bool = False
) -> Classifier:
    """A classifier from a judge's stored or submitted settings; ValidationError({"classification": […]}) lists
    every problem."""
    problems: list[str] = []
    criteria = str(data.get("criteria") or "").strip()
    if not criteria:
        problems.append("criteria: say what the judge classifies, e.g. “Is the answer concise?”")
    if kind == JudgeKind.BINARY:
        target, non_target = (str(data.get(k) or "").strip() for k in ("target", "non_target"))
        if not target or not non_target:
            problems.append("target and non_target: name both categories, e.g. concise and verbose")
        elif target == non_target:
            problems.append("target and non_target: two different categories")
        categories = (Category(target), Category(non_target))
    elif kind == JudgeKind.MULTICLASS:
        categories = _categories(data.get("categories"), problems)
    else:
        raise ValidationError({"kind": f"The kinds are {', '.join(JudgeKind.values)}."})
    uncertainty = str(data.get("uncertainty") or Uncertainty.UNKNOWN)
    if uncertainty not in Uncertainty.values:
        problems.append(f"uncertainty: one of {', '.join(Uncertainty.values)}")
    if kind == JudgeKind.MULTICLASS and uncertainty != Uncertainty.UNKNOWN:
        problems.append("uncertainty: a multiclass judge has no target; an uncertain judge answers UNKNOWN")
    if any(c.name.upper() == UNKNOWN for c in categories):
        problems.append(f"categories: {UNKNOWN} is what an uncertain judge answers; name the categories otherwise")
    columns = tuple(str(c).strip() for c in input_columns or () if str(c).strip())
    if not all(c.isidentifier() for c in columns):
        problems.append("input_columns: dataset column names (letters, digits and _)")
    unknown = [name for name in placeholders(criteria) if name not in columns]
    if unknown:
        problems.append(
            f"criteria: {{{{{unknown[0]}}}}} is not one of the input columns ({', '.join(columns) or 'none'})"
        )
    if problems:
        raise ValidationError({"classification": problems})
    return Classifier(
        kind=kind,
        criteria=criteria,
        categories=categories,
        uncertainty=uncertainty,
        include_reasoning=bool(data.get("include_reasoning", True)),
        include_score=bool(data.get("include_score", False)),
        input_columns=columns,
        lenient=lenient,
    )


def _categories(value: Any, problems: list[str]) -> tuple[Category, ...]:
    if not isinstance(value, list) or not 2 <= len(value) <= MAX_CATEGORIES:
        problems.append(f"categories: 2 to {MAX_CATEGORIES} categories, each a name and a description")
        return ()
    categories: list[Category] = []
    for position, item in enumerate(value, start=1):
        name = str((item or {}).get("name") or "").strip() if isinstance(item, dict) else ""
        if not name or len(name) > 60:
            problems.append(f"categories[{position}]: a name of 1 to 60 characters")
        elif name in {c.name for c in categories}:
            problems.append(f"categories[{position}]: {name} is listed twice")
        else:
            categories.append(Category(name, str(item.get("description") or "").strip()))
    return tuple(categories)


def _uncertain_rule(classifier: Classifier) -> str:
    if classifier.uncertainty == Uncertainty.UNKNOWN:
        return f'If the information is not enough to decide, answer "{UNKNOWN}".'
    chosen = classifier.categories[0 if classifier.uncertainty == Uncertainty.TARGET else 1].name
    return f'If you are not sure, answer "{chosen}".'


def classification_prompt(
    classifier: Classifier, *, request: str, response: str, columns: Mapping[str, Any]
) -> JudgePrompt:
    """The call classifying one answer, in the manner of Evidently's binary and multiclass templates."""
    criteria = render(classifier.criteria, dict(columns)).text
    listed = "\n".join(f"- {c.name}" + (f": {c.description}" if c.description else "") for c in classifier.categories)
    if classifier.kind == JudgeKind.BINARY:
        task = (
            f'Classify the response as "{classifier.categories[0].name}" or "{classifier.categories[1].name}" '
            "by the criteria below."
        )
    else:
        task = "Classify the response into exactly one of the categories below, by the criteria."
    inputs = "\n".join(_column(name, columns[name]) for name in classifier.input_columns)
    parts = [
        f"You are an impartial expert evaluator. {task}",
        f"Criteria:\n{criteria}",
        f"Categories:\n{listed}",
        _uncertain_rule(classifier),
        f"<request>\n{_defanged(request)}\n</request>",
        *([f"Input columns:\n{inputs}"] if inputs else []),
        f"<response>\n{_defanged(response)}\n</response>",
    ]
    fields = ['"category": "<one of ' + ", ".join(classifier.labels) + '>"']
    properties: dict[str, Any] = {"category": {"type": "string", "enum": classifier.labels}}
    if classifier.include_score:
        fields.append('"score": <your confidence, 0 to 1>')
        properties["score"] = {"type": "number", "description": "confidence in the category, from 0 to 1"}
    if classifier.include_reasoning:
        fields.insert(0, '"reasoning": "…"')
        properties = {"reasoning": REASON, **properties}
    reply = "\n\nReply with JSON only: {" + ", ".join(fields) + "}."
    return JudgePrompt(_messages("\n\n".join(parts) + reply), _closed(properties))


def _column(name: str, value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return f'<column name="{name}">\n{_defanged(text)}\n</column>'


@dataclass(frozen=True)
class Classified:
    category: str
    reason: str = ""
    confidence: float | None = None
    extra: dict = field(default_factory=dict)


def read_classification(text: str, classifier: Classifier) -> Classified:
    """{"category", "reasoning"?, "score"?}: the category one of the labels, a score a number from 0 to 1."""
    data = parse_json(text, lenient=classifier.lenient)
    category = data.get("category")
    if category not in classifier.labels:
        raise BadReply(f"The category {json.dumps(category)} is not one of {', '.join(classifier.labels)}.")
    confidence = data.get("score")
    if classifier.include_score:
        if isinstance(confidence, bool) or not isinstance(confidence, int | float) or not 0 <= confidence <= 1:
            raise BadReply(f"The score {json.dumps(confidence)} is not a number from 0 to 1.")
    else:
        confidence = None
    reason = str(data.get("reasoning") or data.get("reason") or "").strip()
    return Classified(category=category, reason=reason, confidence=confidence)
