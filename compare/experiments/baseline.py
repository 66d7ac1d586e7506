"""Baseline regression: an experiment run checked against an earlier one, answer by answer (and, through
`cells_compare`, a comparison's dataset run against an earlier one: run_baseline.py).

Answers are paired by dataset row and combination (its position in the file: the first combination of both runs,
whatever its model or prompt now is). Each pair gets a word diff of the answers and a score change; the runs get a
paired significance verdict. The score is the experiment's judge score (0–1) when both runs were judged on the same
scale, else whether the answer came back (1) or failed (0).

The test itself is pure statistics (lab/stats/baseline.py), asked on first use: it brings SciPy.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import QuerySet

from ..prompts.diff import SideBySide, side_by_side
from .models import BaselinePin, Experiment
from .results import Cell, experiment_results

if TYPE_CHECKING:
    from lab.stats.baseline import PairedTestResult

LATEST = "latest"
JUDGE, SUCCESS = "judge", "success"
SCORE_KINDS = {
    JUDGE: "the judge's score (0–1)",
    SUCCESS: "answered (1) or failed (0)",
}
REGRESSION, IMPROVEMENT = "significant regression", "significant improvement"
NO_SIGNIFICANT_CHANGE, NO_CHANGE, NOT_ENOUGH_DATA = "no significant change", "no change", "not enough data"


@dataclass
class PairChange:
    row: str
    combination: str
    baseline: Cell | None
    current: Cell | None
    baseline_score: float | None
    current_score: float | None
    diff: SideBySide | None

    @property
    def change(self) -> float | None:
        if self.baseline_score is None or self.current_score is None:
            return None
        return self.current_score - self.baseline_score

    @property
    def key(self) -> str:
        return f"{self.row}\x00{self.combination}"


@dataclass
class BaselineComparison:
    baseline: Any  # the Experiment (or a comparison's DatasetRun) checked against
    current: Any
    score_kind: str
    pairs: list[PairChange]
    test: PairedTestResult

    @property
    def score_description(self) -> str:
        return SCORE_KINDS[self.score_kind]

    @property
    def scored(self) -> list[PairChange]:
        return [pair for pair in self.pairs if pair.change is not None]

    @property
    def unmatched(self) -> int:
        return sum(pair.baseline is None or pair.current is None for pair in self.pairs)

    @property
    def changed_answers(self) -> int:
        return sum(bool(pair.diff and pair.diff.changed) for pair in self.pairs)

    @property
    def baseline_mean(self) -> float | None:
        return _mean([pair.baseline_score for pair in self.scored])

    @property
    def current_mean(self) -> float | None:
        return _mean([pair.current_score for pair in self.scored])

    @property
    def verdict(self) -> str:
        test = self.test
        if test.n_pairs and test.n_nonzero == 0:
            return NO_CHANGE
        if not test.enough:
            return NOT_ENOUGH_DATA
        if not test.significant:
            return NO_SIGNIFICANT_CHANGE
        return REGRESSION if (test.mean_difference or 0) < 0 else IMPROVEMENT

    @property
    def is_regression(self) -> bool:
        return self.verdict == REGRESSION

    @property
    def sentence(self) -> str:
        """The verdict in words; each clause is true of the figures shown with it."""
        test = self.test
        verdict = self.verdict
        if verdict == NO_CHANGE:
            return f"No change: all {test.n_pairs} paired scores are the same as the baseline's."
        if not test.n_pairs:
            return "Not enough data: no answer of this run could be paired with a scored answer of the baseline."
        if verdict == NOT_ENOUGH_DATA:
            return (
                f"Not enough data for a verdict: {test.n_nonzero} of {test.n_pairs} paired scores differ; the "
                f"{test.method} test needs at least {test.minimum}, so {test.more_needed} more."
            )
        p = f"{test.method} p = {test.p_value:.4g} over {test.n_nonzero} differing pairs (α = {test.alpha:g})"
        if verdict == NO_SIGNIFICANT_CHANGE:
            return f"No significant change: {p}."
        direction = "lower" if verdict == REGRESSION else "higher"
        return f"{verdict.capitalize()}: scores are {direction} by {abs(test.mean_difference):.3f} on average; {p}."


def _mean(values: list[float | None]) -> float | None:
    present = [v for v in values if v is not None]
    return sum(present) / len(present) if present else None


def score_kind(baseline: Experiment, current: Experiment) -> str:
    judged = [(e.config.get("evaluation") or {}).get("type") for e in (baseline, current)]
    return JUDGE if judged[0] and judged[0] == judged[1] else SUCCESS


def _score(cell: Cell | None, kind: str) -> float | None:
    if cell is None:
        return None
    if kind == SUCCESS:
        return 1.0 if cell.ok else 0.0
    return cell.evaluation.score if cell.evaluation is not None else None


def _cells(experiment: Experiment) -> dict[tuple[str, int], Cell]:
    return {(cell.row, cell.combo.position): cell for cell in experiment_results(experiment).cells}


def baseline_compare(*, baseline: Experiment, current: Experiment) -> BaselineComparison:
    kind = score_kind(baseline, current)
    return cells_compare(baseline=baseline, current=current, old=_cells(baseline), new=_cells(current), kind=kind)


def cells_compare(
    *, baseline: Any, current: Any, old: Mapping[tuple, Cell], new: Mapping[tuple, Cell], kind: str
) -> BaselineComparison:
    """Pair two runs' answers by key (dataset row, combination or variant), diff and score each pair, and run the
    paired test over the pairs scored in both."""
    # Imported here: SciPy is two seconds of start-up for every process that loads the apps, most of which never
    # compares a run with its baseline.
    from lab.stats.baseline import baseline_paired_test

    pairs = []
    # In the current run's order (dataset row, then combination), then what only the baseline had.
    for key in [*new, *(key for key in old if key not in new)]:
        before, after = old.get(key), new.get(key)
        names = after or before
        pairs.append(
            PairChange(
                row=names.row,
                combination=names.combo.name,
                baseline=before,
                current=after,
                baseline_score=_score(before, kind),
                current_score=_score(after, kind),
                diff=side_by_side(before.output.text, after.output.text) if before and after else None,
            )
        )
    scored = [pair for pair in pairs if pair.change is not None]
    test = baseline_paired_test(
        {pair.key: pair.baseline_score for pair in scored}, {pair.key: pair.current_score for pair in scored}
    )
    return BaselineComparison(baseline=baseline, current=current, score_kind=kind, pairs=pairs, test=test)


def workspace_runs(workspace, *, exclude: Experiment | None = None) -> QuerySet[Experiment]:
    """The experiments of a workspace that ran (the ones that can be a baseline), but `exclude`."""
    runs = Experiment.objects.filter(group__workspace=workspace, run_id__isnull=False).select_related("group")
    return runs.exclude(pk=exclude.pk) if exclude is not None else runs


def baseline_resolve(*, workspace, name: str, value: str, exclude: Experiment | None = None) -> Experiment:
    """The run `value` names: a comparison id, or "latest" — the pinned baseline of experiments called `name`, or
    else the newest earlier run of that name. Raises ValidationError on `baseline`."""
    runs = workspace_runs(workspace, exclude=exclude)
    if value.strip().lower() == LATEST:
        pin = BaselinePin.objects.filter(workspace=workspace, name=name).select_related("experiment__group").first()
        if pin is not None and (exclude is None or pin.experiment_id != exclude.pk):
            return pin.experiment
        found = runs.filter(group__title=name).order_by("-created_at", "-id").first()
        if found is None:
            raise ValidationError({"baseline": f'No earlier run of "{name}" in this workspace to compare with.'})
        return found
    if not value.isdigit():
        raise ValidationError({"baseline": f"{value!r}: give a comparison's id or {LATEST!r}."})
    found = runs.filter(group_id=int(value)).first()
    if found is None:
        raise ValidationError({"baseline": f"No experiment run with comparison id {value} in this workspace."})
    return found


@transaction.atomic
def experiment_baseline_set(*, experiment: Experiment, baseline: Experiment) -> Experiment:
    """Record which run `experiment` is checked against (its page then shows the comparison)."""
    if baseline.pk == experiment.pk:
        raise ValidationError({"baseline": "A run cannot be its own baseline."})
    if baseline.group.workspace_id != experiment.group.workspace_id:
        raise ValidationError({"baseline": "No such experiment in this workspace."})
    experiment.baseline = baseline
    experiment.save(update_fields=["baseline"])
    return experiment


@transaction.atomic
def baseline_pin(*, experiment: Experiment, user) -> BaselinePin:
    """Pin this run as the baseline of experiments with its name (replacing the one pinned before)."""
    if experiment.run_id is None:
        raise ValidationError({"experiment": "Only a run can be a baseline; start this experiment first."})
    pin, _ = BaselinePin.objects.update_or_create(
        workspace=experiment.group.workspace,
        name=experiment.group.title,
        defaults={"experiment": experiment, "pinned_by": user},
    )
    return pin


def baseline_of(experiment: Experiment) -> Experiment | None:
    """The run `experiment` is checked against: the one chosen for it, else the pinned baseline of its name; never
    itself (a pinned run has no baseline of its own unless one was chosen)."""
    baseline = experiment.baseline or pinned_baseline(experiment)
    return None if baseline is None or baseline.pk == experiment.pk else baseline


def pinned_baseline(experiment: Experiment) -> Experiment | None:
    pin = BaselinePin.objects.filter(workspace=experiment.group.workspace_id, name=experiment.group.title).first()
    return pin.experiment if pin else None
