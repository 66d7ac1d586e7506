"""Writes for experiments: create one from a checked file (its dataset, its custom comparison), start it, and stop
starting calls once its budget is spent.

Running goes through compare's own services and task: `round_start` queues one round per dataset row (each runs
every combination at once), and the round task, or the command line calling the same code, runs them.
"""

from __future__ import annotations

from decimal import Decimal
from functools import partial

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from lab.copy_insert import copy_insert
from lab.events import PROGRESS, ExperimentFigures, progress
from lab.models import Workspace
from lab.realtime import broadcast, group_channel

from ..models import Mode, Output, OutputStatus, Round, RoundStatus
from ..services import dataset_create, group_create, round_start
from .estimate import Estimate, experiment_estimate
from .models import Evaluation, EvaluationStatus, Experiment
from .plan import Plan, plan_check
from .selectors import experiment_progress, experiment_spent
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
    *, workspace: Workspace, user, config: ExperimentConfig, source: str = "", budget: Decimal | None = None
) -> Experiment:
    """The experiment's dataset (unless it names one of the workspace's), its custom comparison and itself."""
    if budget is not None and budget <= 0:
        raise ValidationError({"budget": "A budget cap is an amount of dollars above 0."})
    plan, estimate = experiment_plan(config=config, workspace=workspace)
    dataset = plan.dataset
    if dataset is None and plan.rows:
        rows = [{"name": row.name, "vars": row.vars} for row in plan.rows]
        dataset = dataset_create(workspace=workspace, user=user, name=f"{config.name} · rows", rows=rows)
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
    Experiment.objects.select_for_update().filter(pk=experiment.pk).first()  # one start at a time
    experiment.refresh_from_db()
    if experiment.run_id is not None:
        raise ValidationError({"experiment": "This experiment has already run; export it and run the file again."})
    group = experiment.group
    rounds = round_start(
        group=group,
        user=user,
        dataset=group.dataset,
        use_cache=experiment.config.get("cache", False),
        enqueue=not run_here,
    )
    experiment.run_id = rounds[0].run_id
    experiment.save(update_fields=["run_id"])
    if experiment.evaluates:
        outputs = Output.objects.filter(round__in=rounds).values_list("pk", flat=True)
        copy_insert(Evaluation, ({"experiment_id": experiment.pk, "output_id": pk} for pk in outputs))
    return rounds


@transaction.atomic
def experiment_budget_enforce(*, experiment_id: int) -> bool:
    """Once the spent cost reaches the cap, cancel the rounds not yet started and skip the evaluations not yet
    started, saying why; calls already running finish. True when this call stopped the experiment."""
    experiment = Experiment.objects.select_for_update().filter(pk=experiment_id).first()
    if experiment is None or experiment.budget is None or experiment.stopped_reason:
        return False
    spent = experiment_spent(experiment)
    if spent < experiment.budget:
        return False
    experiment.stopped_reason = (
        f"Stopped at the budget cap of ${experiment.budget.normalize():f}: ${spent:.6f} spent. Calls not yet "
        "started were not made; those already running finished."
    )
    experiment.save(update_fields=["stopped_reason"])
    now = timezone.now()
    queued = Round.objects.filter(group=experiment.group_id, run_id=experiment.run_id, status=RoundStatus.QUEUED)
    for round_id in queued.values_list("pk", flat=True):
        if Round.objects.transition(round_id, RoundStatus.CANCELLED, finished_at=now, error=experiment.stopped_reason):
            Output.objects.filter(round_id=round_id).unfinished().update(
                status=OutputStatus.CANCELLED, error="Not started: the budget cap was reached.", finished_at=now
            )
    experiment.evaluations.filter(status=EvaluationStatus.QUEUED).update(
        status=EvaluationStatus.SKIPPED, reason="Not evaluated: the budget cap was reached.", finished_at=now
    )
    transaction.on_commit(partial(experiment_announce, experiment.pk))
    return True


def experiment_announce(experiment_id: int) -> None:
    """Tell the experiment's page where it stands: a `progress` event with its counts."""
    experiment = Experiment.objects.filter(pk=experiment_id).first()
    if experiment is None:
        return
    figures = experiment_progress(experiment)
    own = ExperimentFigures(
        experiment=experiment.pk,
        answers_done=figures["answers_done"],
        answers_total=figures["answers_total"],
        evaluations_done=figures["evaluations_done"],
        evaluations_total=figures["evaluations_total"],
        spent=figures["spent"],
        unpriced_calls=figures["unpriced_calls"],
        stopped=figures["stopped"],
        finished=figures["finished"],
    )
    payload = progress(run=figures["run"], done=figures["done"], total=figures["total"], experiment=own)
    broadcast(group_channel(experiment.group_id), PROGRESS, **payload)
