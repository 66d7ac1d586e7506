"""Writes for experiments: create one from a checked file (its dataset, its custom comparison) and start it. Its
budget is held call by call in `budget`.

Running goes through compare's own services and task: `round_start` queues one round per dataset row (each runs
every combination at once), and the round task, or the command line calling the same code, runs them.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from dataclasses import dataclass
from decimal import Decimal

from django.core.exceptions import ValidationError
from django.db import transaction

from lab.copy_insert import copy_insert
from lab.models import Workspace

from ..datasets.services import dataset_for_rows
from ..models import Mode, Output, Round
from ..rounds.start import round_start, rows_check
from ..services import group_create
from .budget import budget_check
from .estimate import Estimate, experiment_estimate
from .models import Evaluation, Experiment
from .plan import Plan, plan_check
from .spec import ConfigError, ExperimentConfig

# Every combination of a row starts at once: the connections' limits (and the command's --concurrency) already
# keep a burst from a provider. A stagger would also send the first variant of every round claimed before the
# second variant of the first round, so when the calls in flight ran out every round was half done: none could be
# written and make room for the next claim until a second wave of calls had ended.
STAGGER_MS = 0


def experiment_plan(*, config: ExperimentConfig, workspace: Workspace) -> tuple[Plan, Estimate]:
    """Check a file against the workspace and estimate it; nothing is saved. Raises ConfigError."""
    plan = plan_check(config=config, workspace=workspace)
    return plan, experiment_estimate(plan, workspace)


@transaction.atomic
def experiment_create(
    *,
    workspace: Workspace,
    user,
    config: ExperimentConfig,
    source: str = "",
    budget: Decimal | None = None,
    planned: tuple[Plan, Estimate] | None = None,
) -> Experiment:
    """The experiment's dataset (unless it names one of the workspace's; the workspace's dataset of the same rows when
    it has one), its custom comparison and itself. `planned` is `experiment_plan`'s answer for this very config and
    workspace when the caller has just asked for it (the command line prints the estimate first): checking and
    estimating a thousand rows again cost the command 65 ms before its first call."""
    if budget is not None and budget <= 0:
        raise ValidationError({"budget": "A budget cap is an amount of dollars above 0."})
    plan, estimate = planned or experiment_plan(config=config, workspace=workspace)
    budget_check(budget=budget, calls=estimate.calls, unpriced_calls=estimate.unpriced_calls)
    dataset = plan.dataset
    if dataset is None and plan.rows:
        rows = [{"name": row.name, "vars": row.vars, "assertions": row.assertions} for row in plan.rows]
        dataset = dataset_for_rows(workspace=workspace, user=user, name=f"{config.name} · rows", rows=rows)
    try:
        group = group_create(
            workspace=workspace,
            user=user,
            mode=Mode.CUSTOM,
            title=config.name,
            system_prompt=config.system_prompt,
            shared_variables=config.variables,
            variants=plan.variants,
            stagger_ms=STAGGER_MS,
            timeout_ms=int(config.timeout_s * 1000),
            dataset=dataset,
            rows_checked=True,  # by experiment_plan; rendered when the rounds start
            tools=config.tools,
            tool_choice=config.tool_choice,
            # Toor's structured-output block is sent natively (docs/tools.md), unless it says validate only.
            response_schema=config.structured.response_schema() if config.structured else None,
            assertions=config.assertions,
        )
    except ValidationError as exc:
        # The plan checks what the comparison checks; this only says so if the two ever disagree.
        raise ConfigError([f"{config.source}: {message}" for message in exc.messages]) from None
    return Experiment.objects.create(
        group=group, source=source or config.source, config=config.as_data(), budget=budget, estimate=estimate.as_dict()
    )


@transaction.atomic
def experiment_start(*, experiment: Experiment, user, run_here: bool = False) -> list[Round]:
    """Queue one round per dataset row (one round without rows) and each answer's evaluation. With `run_here` the
    caller runs the rounds itself (the command line), so none is sent to the workers (see `round_start`)."""
    _lock_unstarted(experiment)
    rounds = _start_rounds(experiment, user, enqueue=not run_here)
    _started(experiment, rounds[0].run_id)
    return rounds


@dataclass
class StartedInParts:
    """A run whose first rounds are written (`rounds`) and whose other rounds `rest` writes, in a transaction of its
    own; the experiment has started (`run_id`) once `rest` has committed."""

    rounds: list[Round]
    rest: Callable[[], list[Round]]


def experiment_start_in_parts(*, experiment: Experiment, user, first: int) -> StartedInParts:
    """`experiment_start` for the command line, which runs the rounds itself: the first `first` rows' rounds are
    committed at once so that their calls can go while the others are written (writing 1,000 rounds and their
    3,000 answers took 0.15 s before the first call). Every row is checked first, as `experiment_start` checks
    them: a row that cannot be sent stops the run before any call.

    Until the rest is written the experiment has no `run_id`: its page and progress show it not yet started rather
    than finished with part of its rows (`starting_run_id` refuses a second start). A command stopped in between
    leaves the first rounds to the workers (see `round_start`) and the experiment unstarted: run the file again."""
    with transaction.atomic():
        _lock_unstarted(experiment)
        rows_check(group=experiment.group, dataset=experiment.group.dataset)  # every row, before any call
        rounds = _start_rounds(experiment, user, enqueue=False, part=slice(0, first), check=False)
        experiment.starting_run_id = rounds[0].run_id
        experiment.save(update_fields=["starting_run_id"])

    def rest() -> list[Round]:
        with transaction.atomic():
            more = _start_rounds(
                experiment, user, enqueue=False, part=slice(first, None), run=rounds[0].run_id, check=False
            )
            _started(experiment, rounds[0].run_id)
        return more

    return StartedInParts(rounds=rounds, rest=rest)


def _lock_unstarted(experiment: Experiment) -> None:
    Experiment.objects.select_for_update().filter(pk=experiment.pk).first()  # one start at a time
    experiment.refresh_from_db()
    if experiment.run_id is not None or experiment.starting_run_id is not None:
        raise ValidationError({"experiment": "This experiment has already run; export it and run the file again."})


def _start_rounds(
    experiment: Experiment,
    user,
    *,
    enqueue: bool,
    part: slice = slice(None),
    run: uuid.UUID | None = None,
    check: bool = True,
) -> list[Round]:
    group = experiment.group
    rounds = round_start(
        group=group,
        user=user,
        dataset=group.dataset,
        use_cache=experiment.config.get("cache", False),
        enqueue=enqueue,
        part=part,
        run=run,
        check=check,
    )
    if experiment.evaluates and rounds:
        outputs = Output.objects.filter(round__in=rounds).values_list("pk", flat=True)
        copy_insert(Evaluation, ({"experiment_id": experiment.pk, "output_id": pk} for pk in outputs))
    return rounds


def _started(experiment: Experiment, run_id) -> None:
    experiment.run_id = run_id
    experiment.save(update_fields=["run_id"])
