"""A comparison's dataset run checked against an earlier dataset run of the same comparison, with the
experiments' baseline machinery (compare/experiments/baseline.py): the same pairing, answer diff, paired test,
sample guard and verdict sentence.

A dataset run is the rounds of one `POST /groups/{id}/runs/` with a dataset (they share a `run_id`). Answers are
paired by dataset row and variant (its position), so both runs must have run the same dataset. The score is
whether the answer came back (1) or failed (0): verdict scores are judging's, which compare may not read.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import datetime

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Min

from lab.templating import variant_name

from ..models import CompareGroup, DatasetRunPin, Output
from .baseline import LATEST, SUCCESS, BaselineComparison, cells_compare
from .results import Cell, Combo


@dataclass(frozen=True)
class DatasetRun:
    group: CompareGroup
    run_id: uuid.UUID
    dataset_id: int
    started_at: datetime


@dataclass(frozen=True)
class _VariantCombo(Combo):
    """A comparison's variant where the experiments' pairing expects a combination."""

    @property
    def name(self) -> str:
        return f"{self.label} · {self.model}"


def dataset_runs(group: CompareGroup) -> list[DatasetRun]:
    """The comparison's dataset runs, oldest first (a run whose rows were all deleted since is left out)."""
    runs = (
        group.rounds.filter(dataset_row__isnull=False)
        .values("run_id", "dataset_row__dataset_id")
        .annotate(started=Min("created_at"))
        .order_by("started", "run_id")
    )
    return [DatasetRun(group, run["run_id"], run["dataset_row__dataset_id"], run["started"]) for run in runs]


def dataset_run_resolve(
    *, group: CompareGroup, value: str, field: str, current: DatasetRun | None = None
) -> DatasetRun:
    """The dataset run `value` names: its run id, or (given the `current` run) "latest": the comparison's pinned
    run, or else the newest run before `current` on the same dataset. Raises ValidationError on `field`."""
    runs = dataset_runs(group)
    value = (value or "").strip()
    if value.lower() == LATEST and current is not None:
        pinned = pinned_dataset_run(group)
        if pinned is not None and pinned.run_id != current.run_id and pinned.dataset_id == current.dataset_id:
            return pinned
        earlier = [run for run in runs if run.dataset_id == current.dataset_id and run.started_at < current.started_at]
        if not earlier:
            raise ValidationError({field: "No earlier dataset run of this comparison on the same dataset."})
        return earlier[-1]
    try:
        wanted = uuid.UUID(value)
    except ValueError:
        hint = f" or {LATEST!r}" if current is not None else ""
        raise ValidationError({field: f"{value!r}: give a run id{hint}."}) from None
    for run in runs:
        if run.run_id == wanted:
            return run
    raise ValidationError({field: f"No dataset run {value} in this comparison."})


def pinned_dataset_run(group: CompareGroup) -> DatasetRun | None:
    """The comparison's pinned baseline run, while any of its rounds (with their rows) remain."""
    pin = DatasetRunPin.objects.filter(group=group).first()
    return next((run for run in dataset_runs(group) if pin and run.run_id == pin.run_id), None)


@transaction.atomic
def dataset_run_pin(*, run: DatasetRun, user) -> DatasetRunPin:
    """Pin `run` as the baseline its comparison's later dataset runs are checked against (replacing the last)."""
    pin, _ = DatasetRunPin.objects.update_or_create(group=run.group, defaults={"run_id": run.run_id, "pinned_by": user})
    return pin


def _cells(run: DatasetRun) -> dict[tuple[int, int], Cell]:
    outputs = Output.objects.filter(round__group=run.group, round__run_id=run.run_id, round__dataset_row__isnull=False)
    cells = {}
    for output in outputs.select_related("round__dataset_row", "variant").order_by(
        "round__number", "variant__position"
    ):
        row, variant = output.round.dataset_row, output.variant
        name = variant_name(variant.position, variant.label)
        cells[(row.pk, variant.position)] = Cell(
            output=output,
            # Row numbers keep pairs apart even where two rows share a name.
            row=f"Row {row.position}: {row.name}" if row.name else f"Row {row.position}",
            combo=_VariantCombo(variant.position, name, variant.model, parameters="", prompt=variant.prompt),
            round_number=output.round.number,
            evaluation=None,
        )
    return cells


def dataset_run_compare(*, baseline: DatasetRun, current: DatasetRun) -> BaselineComparison:
    """Each answer of `current` against the same row and variant's answer in `baseline`, with the paired verdict."""
    if baseline.run_id == current.run_id:
        raise ValidationError({"against": "A run cannot be its own baseline."})
    if baseline.dataset_id != current.dataset_id:
        raise ValidationError({"against": "That run used another dataset: rows pair only within one dataset."})
    return cells_compare(baseline=baseline, current=current, old=_cells(baseline), new=_cells(current), kind=SUCCESS)
