"""Starting and cancelling rounds, the user's side of a round's lifecycle (the worker's is `worker.py`).

`round_start` checks every variant renders with each round's variables, numbers the rounds, creates their outputs
(a blind round in its own random order) and enqueues them once the transaction commits; `round_cancel` stops one.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Exists, Max, OuterRef
from django.utils import timezone

from lab.copy_insert import copy_insert, copy_instances
from lab.files.references import looks_like_reference
from lab.files.selectors import references_problems
from lab.jobs.enqueue import enqueue_on_commit
from lab.jobs.kinds import Lane
from lab.templating import VariantTemplate, render_variants

from ..blind import creation_order
from ..catalog import cached_targets
from ..field_errors import FieldErrors
from ..models import CompareGroup, Dataset, DatasetRow, Experiment, Output, OutputStatus, Round, RoundStatus, Variant
from .jobs import ROUND
from .worker import rounds_announce

MAX_REPEAT = 100


@transaction.atomic
def round_start(
    *,
    group: CompareGroup,
    user,
    repeat: int | None = None,
    dataset: Dataset | None = None,
    use_cache: bool = False,
    enqueue: bool = True,
    part: slice = slice(None),
    run: uuid.UUID | None = None,
    check: bool = True,
) -> list[Round]:
    """Queue `repeat` rounds, or one per row of `dataset`; each is enqueued once the transaction commits.

    `part` and `run` start a run in parts (compare.experiments.services.experiment_start_in_parts): only that slice
    of the dataset's rows (in position order) or of the repeats, numbered after the group's last round, as rounds
    of `run`; a part past the last row starts none. Without `check` the caller has checked every row
    (`rows_check`) in this transaction or an earlier one.

    With `use_cache`, a call identical to one answered before in this workspace takes that answer (response_cache).
    With `enqueue=False` the caller runs the rounds itself and no message is sent (a thousand of them took a second
    before the command line's first call); the sweeper sends one for a round still queued after
    JOBS_REQUEUE_AFTER_S, as for a lost message, so a worker finishes what a caller that stopped left.
    """
    if dataset is not None and repeat not in (None, 1):
        raise ValidationError({"repeat": "Run a dataset (one round per row) or repeat rounds, not both."})
    if dataset is not None and dataset.workspace_id != group.workspace_id:
        raise ValidationError({"dataset": "No such dataset in this workspace."})
    repeat = 1 if repeat is None else repeat
    if not 1 <= repeat <= MAX_REPEAT:
        raise ValidationError({"repeat": f"Repeat 1 to {MAX_REPEAT} times."})
    # One numbering at a time; the locked row also says whether the comparison is an experiment's.
    experiment = Exists(Experiment.objects.filter(group=OuterRef("pk")))
    locked = CompareGroup.objects.select_for_update().filter(pk=group.pk).annotate(of_experiment=experiment)
    is_experiment = locked.values_list("of_experiment", flat=True).first()
    variants = list(group.variants.order_by("position"))
    rows: list[DatasetRow | None] = (
        list(dataset.rows.order_by("position")[part]) if dataset else ([None] * repeat)[part]
    )
    if not rows:
        if part != slice(None):
            return []
        raise ValidationError({"dataset": "This dataset has no rows."})
    snapshots = _snapshots(group, rows)
    if check:
        _check_rows(group, variants, rows, snapshots)

    # One round someone started is interactive; a dataset, repeats or an experiment's rows are batch work.
    lane = Lane.INTERACTIVE if len(rows) == 1 and dataset is None and not is_experiment else Lane.BATCH
    first = (group.rounds.aggregate(last=Max("number"))["last"] or 0) + 1
    now = timezone.now()
    run = run or uuid.uuid4()
    rounds = copy_instances(
        Round,
        [
            Round(
                group=group,
                number=first + index,
                variables=snapshot,
                dataset_row=row,
                seed=group.params.get("seed"),
                run_id=run,
                created_by=user,
                lane=lane,
                use_cache=use_cache,
                enqueued_at=now,
            )
            for index, (row, snapshot) in enumerate(zip(rows, snapshots, strict=True))
        ],
    )
    copy_insert(
        Output,
        # A blind round draws its own order: one order for the whole run would let one round's ids give away all.
        ({"round_id": r.pk, "variant_id": v.pk} for r in rounds for v in creation_order(group, variants)),
    )
    if enqueue:
        for round_ in rounds:
            enqueue_on_commit(ROUND, round_.pk, queue=lane)
    return rounds


def rows_check(*, group: CompareGroup, dataset: Dataset | None) -> None:
    """What `round_start` checks of the rounds it starts, for every row of `dataset` (one round without): a run
    started in parts checks them all before its first part is written, so a row that cannot be sent stops it
    before any call. Raises ValidationError."""
    rows: list[DatasetRow | None] = list(dataset.rows.order_by("position")) if dataset else [None]
    _check_rows(group, list(group.variants.order_by("position")), rows, _snapshots(group, rows))


def _snapshots(group: CompareGroup, rows: list[DatasetRow | None]) -> list[dict]:
    return [{**group.shared_variables, **(row.vars if row else {})} for row in rows]


def _check_rows(group: CompareGroup, variants: list[Variant], rows: list, snapshots: list[dict]) -> None:
    errors = FieldErrors()
    targets = cached_targets(
        group.workspace,
        {v.position: v.model for v in variants},
        {v.position: {**group.params, **v.params} for v in variants},
    )
    templates = [variant.template(targets.get(variant.position)) for variant in variants]
    row_errors(errors, group.system_prompt, templates, rows, snapshots, shared_messages=group.shared_messages)
    _file_errors(errors, group.workspace_id, rows, snapshots)
    errors.raise_if_any()


def _file_errors(errors: FieldErrors, workspace_id: int, rows: list, snapshots: list[dict]) -> None:
    """A round's variables (a dataset row's over the shared ones) may name only this workspace's files."""
    if not any(looks_like_reference(value) for snapshot in snapshots for value in snapshot.values()):
        return
    for row, problems in zip(rows, references_problems(snapshots, workspace_id=workspace_id), strict=True):
        for name, problem in problems.items():
            if row is None:
                errors.add("shared_variables", f"{name}: {problem}")
            else:
                errors.add("dataset", f"Row {row.position}{f' ({row.name})' if row.name else ''}: {name}: {problem}")


def row_errors(
    errors: FieldErrors,
    system_prompt: str,
    templates: list[VariantTemplate],
    rows: list,
    snapshots: list[dict],
    *,
    shared_messages: Sequence[Mapping[str, Any]] = (),
) -> None:
    """Every variant's conversation rendered with each round's variables (and checked against its provider's rules
    where a template has a target); a failure is named by its dataset row (None: no row)."""
    for row, snapshot in zip(rows, snapshots, strict=True):
        rendered = render_variants(
            system_prompt=system_prompt, variables=snapshot, variants=templates, shared_messages=shared_messages
        )
        for message in rendered.errors:
            if row is None:
                errors.add("variants", message)
            else:
                errors.add("dataset", f"Row {row.position}{f' ({row.name})' if row.name else ''}: {message}")


@transaction.atomic
def round_cancel(*, round: Round, user) -> Round:
    """Stop a round: unfinished outputs become `cancelled` now; a running worker stops streaming within ~1 s."""
    now = timezone.now()
    if not Round.objects.transition(round.pk, RoundStatus.CANCELLED, finished_at=now, error=f"Cancelled by {user}."):
        round.refresh_from_db()
        if round.status == RoundStatus.CANCELLED:
            return round
        raise ValidationError(
            {"round": f"Round {round.number} is already {round.get_status_display().lower()}; nothing to cancel."}
        )
    round.outputs.unfinished().update(status=OutputStatus.CANCELLED, error="Cancelled.", finished_at=now)
    round.refresh_from_db()
    transaction.on_commit(partial(rounds_announce, [round]))
    return round
