"""An experiment's results: one cell per dataset row × combination, and averages grouped by model, parameter set,
prompt, dataset row and combination. The page and the command line read the same figures.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from functools import cached_property
from statistics import fmean
from typing import Any

from lab.stats.intervals import wilson_interval

from ..models import OUTPUT_UNFINISHED, Output, OutputStatus, Round
from .models import Evaluation, EvaluationStatus, Experiment
from .naming import combination_names

FAILED = (OutputStatus.ERROR, OutputStatus.TIMEOUT)
GROUPINGS = (("model", "Model"), ("parameters", "Parameters"), ("prompt", "Prompt"), ("row", "Dataset row"))


@dataclass(frozen=True)
class Combo:
    position: int
    label: str
    model: str
    parameters: str
    prompt: str

    @property
    def name(self) -> str:
        return f"{self.model} · {self.parameters} · {self.prompt}"


@dataclass
class Cell:
    output: Output
    combo: Combo
    row: str
    round_number: int
    evaluation: Evaluation | None

    @property
    def ok(self) -> bool:
        return self.output.status == OutputStatus.OK

    @property
    def scale_score(self) -> float | None:
        return self.evaluation.scale_score if self.evaluation else None

    @property
    def category(self) -> str:
        return self.evaluation.category if self.evaluation else ""

    @property
    def valid(self) -> bool | None:
        """Whether the answer matches the schema: the evaluation's check, else the answer's own (docs/tools.md)."""
        if self.evaluation is not None and self.evaluation.schema_valid is not None:
            return self.evaluation.schema_valid
        return self.output.schema_valid

    @property
    def tokens(self) -> int:
        return (self.output.input_tokens or 0) + (self.output.output_tokens or 0)

    # Cached: every grouping of the averages reads them (five times a cell); a cell is a snapshot, never changed.
    @cached_property
    def call_costs(self) -> list[Decimal | None]:
        """The cost of each call made for this cell (the answer, the judge's), None where the price is unknown."""
        calls = [self.output.cost] if self.output.finished_at and self.output.status != OutputStatus.CANCELLED else []
        if self.evaluation is not None and self.evaluation.judge_calls:
            calls.append(self.evaluation.cost)
        return calls

    @cached_property
    def cost(self) -> Decimal | None:
        costs = [c for c in self.call_costs if c is not None]
        return sum(costs, Decimal(0)) if costs else None

    def value(self, key: str) -> str:
        return self.row if key == "row" else getattr(self.combo, key)


@dataclass(frozen=True)
class CategoryShare:
    count: int
    classified: int
    share: float
    ci_low: float
    ci_high: float


@dataclass
class Average:
    key: str
    answers: int = 0
    failed: int = 0  # answers that errored or timed out
    unfinished: int = 0  # queued or running: not failed (yet)
    not_started: int = 0  # answers never asked (the budget cap, or the round was cancelled)
    score: float | None = None  # mean on the evaluation type's scale, over the answers judged
    scored: int = 0
    valid_share: float | None = None  # share of checked answers matching the schema
    valid_low: float | None = None  # its Wilson 95% interval
    valid_high: float | None = None
    latency_s: float | None = None
    tokens: float | None = None  # mean per answer, input and output
    evaluation_s: float | None = None
    cost: Decimal | None = None  # answers and evaluations of known price
    priced_calls: int = 0
    unpriced_calls: int = 0  # calls made whose price is unknown: not in `cost`
    cached: int = 0  # answers taken from the response cache (no call made, cost 0)
    # A classification's categories: category → (count, share of the answers classified, Wilson 95% interval).
    categories: dict[str, CategoryShare] = field(default_factory=dict)


@dataclass
class ResultRow:
    name: str
    round_number: int
    cells: list[Cell | None]


@dataclass
class Results:
    experiment: Experiment
    combos: list[Combo]
    rows: list[ResultRow]
    cells: list[Cell]
    averages: dict[str, list[Average]] = field(default_factory=dict)  # by grouping key, and "combination"
    overall: Average | None = None
    scale: str = ""  # the evaluation type, e.g. "1-5"; empty without a judge


def experiment_results(experiment: Experiment) -> Results:
    group = experiment.group
    names = combination_names(experiment.config)
    variants = list(group.variants.order_by("position"))
    combos = [
        Combo(v.position, v.label, *(names[v.position - 1] if v.position <= len(names) else (v.model, "", v.label)))
        for v in variants
    ]
    by_position = {combo.position: combo for combo in combos}
    by_pk = {variant.pk: variant for variant in variants}  # each knows its group (read through group.variants)
    # Each round and variant read once, not once per answer: 3,000 answers made 12,000 objects (and reading each
    # answer's variant and group with it, for its tools, decoded the group's JSON fields 10,000 times at the end of
    # a run of 10,000 calls).
    rounds = Round.objects.filter(group=group, run_id=experiment.run_id).values_list(
        "pk", "number", "dataset_row__name", "dataset_row__position"
    )
    round_of = {pk: (number, _row_name(number, name, position)) for pk, number, name, position in rounds}
    outputs = (
        Output.objects.filter(round__group=group, round__run_id=experiment.run_id)
        .select_related("evaluation")
        .order_by("round__number", "variant__position")
    )
    rows: dict[int, ResultRow] = {}
    cells = []
    for output in outputs:
        number, row_name = round_of[output.round_id]
        output.variant = by_pk[output.variant_id]  # its tools, for promptfoo's output (assertions.tool_facts)
        position = output.variant.position
        row = rows.setdefault(number, ResultRow(row_name, number, [None] * len(combos)))
        evaluation = getattr(output, "evaluation", None)
        cell = Cell(output, by_position[position], row_name, number, evaluation)
        row.cells[position - 1] = cell
        cells.append(cell)
    results = Results(experiment, combos, list(rows.values()), cells)
    results.scale = (experiment.config.get("evaluation") or {}).get("type", "")
    for key, _ in GROUPINGS:
        results.averages[key] = averages(cells, lambda cell, key=key: cell.value(key))
    results.averages["combination"] = averages(cells, lambda cell: cell.combo.name)
    results.overall = _average("all", cells)
    return results


def _row_name(number: int, row_name: str | None, row_position: int | None) -> str:
    """A round's name in the results: its dataset row's (name, else position), or its number without a row."""
    if row_position is not None:
        return row_name or f"row-{row_position}"
    return f"round {number}"


def averages(cells: Iterable[Cell], key: Callable[[Cell], str]) -> list[Average]:
    groups: dict[str, list[Cell]] = {}
    for cell in cells:
        groups.setdefault(key(cell), []).append(cell)
    return [_average(name, members) for name, members in groups.items()]


def _average(key: str, cells: list[Cell]) -> Average:
    answered = [c for c in cells if c.ok]
    scores = [c.scale_score for c in cells if c.scale_score is not None]
    checked = [c.valid for c in cells if c.valid is not None]
    evaluated = [c.evaluation.latency_ms for c in cells if c.evaluation and c.evaluation.latency_ms is not None]
    costs = [c.cost for c in cells if c.cost is not None]
    calls = [cost for c in cells for cost in c.call_costs]
    return Average(
        key=key,
        answers=len(cells),
        failed=sum(1 for c in cells if c.output.status in FAILED),
        unfinished=sum(1 for c in cells if c.output.status in OUTPUT_UNFINISHED),
        not_started=sum(1 for c in cells if c.output.status == OutputStatus.CANCELLED),
        score=_mean(scores),
        scored=len(scores),
        valid_share=_mean([1.0 if valid else 0.0 for valid in checked]),
        valid_low=wilson_interval(sum(checked), len(checked))[0] if checked else None,
        valid_high=wilson_interval(sum(checked), len(checked))[1] if checked else None,
        latency_s=_mean([c.output.latency_ms / 1000 for c in answered if c.output.latency_ms is not None]),
        tokens=_mean([c.tokens for c in answered]),
        evaluation_s=_mean([ms / 1000 for ms in evaluated]),
        cost=sum(costs, Decimal(0)) if costs else None,
        priced_calls=sum(1 for cost in calls if cost is not None),
        unpriced_calls=sum(1 for cost in calls if cost is None),
        cached=sum(1 for c in cells if c.output.cached),
        categories=_category_shares([c.category for c in cells if c.category]),
    )


def _category_shares(categories: list[str]) -> dict[str, CategoryShare]:
    counts = Counter(categories)
    total = len(categories)
    return {name: CategoryShare(n, total, n / total, *wilson_interval(n, total)) for name, n in sorted(counts.items())}


def _mean(values: list[Any]) -> float | None:
    # fmean, not mean: mean sums in exact fractions (a sixth of the results' time for 3,000 answers, under
    # cProfile); fmean's sum is math.fsum's, so the two differ at most in the last bits; every mean is shown rounded.
    return fmean(values) if values else None


def failed_cells(results: Results) -> list[Cell]:
    """Answers that failed or timed out, and evaluations the judge could not give (not those never started)."""
    return [
        cell
        for cell in results.cells
        if cell.output.status in FAILED
        or (cell.evaluation is not None and cell.evaluation.status == EvaluationStatus.FAILED)
    ]
