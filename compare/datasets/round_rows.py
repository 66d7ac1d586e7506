"""Rounds saved as dataset rows: each round's variables exactly as it ran, optionally with a `reference` answer.

The reference (the answer a person chose) comes from the caller: votes are voting's, which compare may not import,
so voting's API works out each round's winner and passes the texts in (voting/round_winners.py).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence

from django.core.exceptions import ValidationError
from django.db import transaction

from lab.models import Workspace

from ..blind import require_revealed
from ..models import Dataset, Round
from .rows import MAX_DATASET_ROWS
from .services import dataset_create, dataset_rows_append

REFERENCE = "reference"


def round_reference(round_: Round) -> str:
    """The reference answer a round ran with (its dataset row's `reference` variable), or "" when it has none;
    what judges of comparisons and of experiments are shown for comparison."""
    reference = round_.variables.get(REFERENCE)
    return reference if isinstance(reference, str) else ""


def round_row(round_: Round, reference: str | None = None) -> dict:
    """The row a round becomes: named after its comparison and number, its variables copied as they ran."""
    variables = dict(round_.variables)
    if reference is not None:
        variables[REFERENCE] = reference
    return {"name": f"{round_.group.title} #{round_.number}"[:200], "vars": variables}


def rounds_chosen(
    workspace: Workspace, *, ids: Sequence[int] | None = None, group_id: int | None = None
) -> list[Round]:
    """The rounds a request names: by id (in the order given, each once), or every round of the comparison
    `group_id` in number order; only rounds of `workspace`. Raises ValidationError on `rounds` or `group`."""
    rounds = Round.objects.filter(group__workspace=workspace).select_related("group")
    if group_id is not None:
        chosen = list(rounds.filter(group_id=group_id).order_by("number"))
        if not chosen:
            raise ValidationError({"group": "No comparison with rounds by this id in this workspace."})
        return chosen
    ids = list(ids or [])
    found = rounds.in_bulk(ids)
    missing = [pk for pk in ids if pk not in found]
    if missing:
        raise ValidationError({"rounds": f"No such rounds in this workspace: {missing}."})
    return [found[pk] for pk in dict.fromkeys(ids)]


@transaction.atomic
def rounds_save_as_rows(
    *,
    workspace: Workspace,
    user,
    rounds: Sequence[Round],
    dataset: Dataset | None = None,
    name: str = "",
    references: Mapping[int, str] | None = None,
) -> Dataset:
    """Append the rounds (in the order given) to `dataset`, or to a new dataset called `name`; a round whose input
    (its variables) is already a row, or another round's, adds no row (`rows_distinct`).

    With `references` (round id → answer text), each round gets its reference; a round whose variables already
    have a `reference` is refused rather than overwritten, so saved rows always reproduce what the round ran with.
    """
    if not rounds:
        raise ValidationError({"rounds": "Choose at least one round."})
    if len(rounds) > MAX_DATASET_ROWS:
        raise ValidationError({"rounds": f"At most {MAX_DATASET_ROWS} rounds at once."})
    if any(round_.group.workspace_id != workspace.pk for round_ in rounds):
        raise ValidationError({"rounds": "No such rounds in this workspace."})
    if dataset is not None and dataset.workspace_id != workspace.pk:
        raise ValidationError({"dataset": "No such dataset in this workspace."})
    for group in {round_.group_id: round_.group for round_ in rounds}.values():
        require_revealed(group, "rounds")
    if references is not None:
        clashes = [f"{r.group.title} #{r.number}" for r in rounds if REFERENCE in r.variables]
        if clashes:
            raise ValidationError(
                {"reference": f"These rounds already have a variable called reference: {', '.join(clashes)}."}
            )
    rows = [round_row(r, references.get(r.pk) if references is not None else None) for r in rounds]
    existing = dataset.rows.values_list("vars", flat=True) if dataset is not None else []
    rows = rows_distinct(rows, existing=existing)
    if dataset is None:
        return dataset_create(workspace=workspace, user=user, name=name, rows=rows)
    if rows:  # every round's input is already a row of the dataset: nothing to add
        dataset_rows_append(dataset=dataset, rows=rows)
    return dataset


def _input_key(vars: Mapping) -> str:
    """A row's input: its variables but the reference answer, as canonical JSON."""
    return json.dumps({k: v for k, v in vars.items() if k != REFERENCE}, sort_keys=True, ensure_ascii=False)


def rows_distinct(rows: Sequence[dict], *, existing: Iterable[Mapping] = ()) -> list[dict]:
    """The rows with distinct inputs, in order, leaving out those whose input is among `existing` (a dataset's rows'
    variables): rounds repeated with the same variables are one example, not several identical ones. Of rows with the
    same input, the first with a reference is kept (else the first), so a chosen answer is not lost."""
    seen = {_input_key(vars) for vars in existing}
    kept: dict[str, dict] = {}
    for row in rows:
        key = _input_key(row["vars"])
        if key in seen:
            continue
        if key not in kept or (REFERENCE not in kept[key]["vars"] and REFERENCE in row["vars"]):
            kept[key] = row if key not in kept else {**row, "name": kept[key]["name"]}
    return list(kept.values())
