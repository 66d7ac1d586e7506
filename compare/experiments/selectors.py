"""Reads for experiments: how far a run is, what it has spent, and the experiments a user may see."""

from __future__ import annotations

from decimal import Decimal

from django.core.exceptions import ValidationError
from django.db.models import Count, Q, QuerySet, Sum

from lab.access import workspaces_of
from lab.models import Membership, Role, Workspace

from ..models import OUTPUT_UNFINISHED, UNPRICED, Output, OutputStatus, RoundStatus
from .models import EVALUATION_UNFINISHED, EvaluationStatus, Experiment


def experiments_for_user(user, *, workspace: int | None = None) -> QuerySet[Experiment]:
    experiments = Experiment.objects.filter(group__workspace__in=workspaces_of(user)).select_related("group")
    if workspace is not None:
        experiments = experiments.filter(group__workspace_id=workspace)
    return experiments.order_by("-created_at", "-id")


def experiment_spent(experiment: Experiment) -> Decimal:
    """Dollars spent so far on answers and their evaluations (calls of unknown price count as nothing)."""
    return _answer_figures(experiment)["spent"] + _evaluation_figures(experiment)["spent"]


def _answer_figures(experiment: Experiment) -> dict:
    """The run's answers counted in one query: all, unfinished, never asked (cancelled), their cost and the finished
    ones without one."""
    answers = Output.objects.filter(round__group=experiment.group_id, round__run_id=experiment.run_id)
    figures = answers.aggregate(
        total=Count("id"),
        unfinished=Count("id", filter=Q(status__in=OUTPUT_UNFINISHED)),
        not_started=Count("id", filter=Q(status=OutputStatus.CANCELLED)),
        spent=Sum("cost"),
        unpriced=Count("id", filter=UNPRICED),
    )
    return {**figures, "spent": figures["spent"] or Decimal(0)}


def _evaluation_figures(experiment: Experiment) -> dict:
    """The run's evaluations counted in one query: all, those still to do, those done (judged, or the judge failed),
    their cost and the unpriced ones. An experiment that evaluates nothing has none, and needs no query (the command
    line asks every second)."""
    if not experiment.evaluates:
        return {"total": 0, "pending": 0, "done": 0, "spent": Decimal(0), "unpriced": 0}
    # An evaluation whose round failed or was cancelled will never run: it counts as done with.
    pending = Q(status__in=EVALUATION_UNFINISHED) & ~Q(
        output__round__status__in=[RoundStatus.FAILED, RoundStatus.CANCELLED]
    )
    figures = experiment.evaluations.aggregate(
        total=Count("id"),
        pending=Count("id", filter=pending),
        done=Count("id", filter=Q(status__in=[EvaluationStatus.DONE, EvaluationStatus.FAILED])),
        spent=Sum("cost"),
        unpriced=Count("id", filter=Q(cost__isnull=True, judge_calls__gt=0)),
    )
    return {**figures, "spent": figures["spent"] or Decimal(0)}


def experiment_progress(experiment: Experiment) -> dict:
    """Calls made and to make (answers, then judge evaluations), the calls that will never be made (the budget cap,
    a cancelled round, an answer with nothing to judge), what was spent, and whether it stopped or finished:
    `done + not_started == total` once it has finished. The command line, the page and the API all show these.

    Two queries whatever the run's size, one without evaluations (the command line asks every second while it
    runs)."""
    answers, evaluations = _answer_figures(experiment), _evaluation_figures(experiment)
    answers_done = answers["total"] - answers["unfinished"] - answers["not_started"]
    judged = bool(experiment.config.get("evaluation"))
    evaluations_total = evaluations["total"] if judged else 0
    evaluations_done = evaluations["done"] if judged else 0
    evaluations_not_started = evaluations_total - evaluations_done - evaluations["pending"] if judged else 0
    return {
        "run": str(experiment.run_id) if experiment.run_id else None,
        "done": answers_done + evaluations_done,
        "not_started": answers["not_started"] + evaluations_not_started,
        "total": answers["total"] + evaluations_total,
        "answers_done": answers_done,
        "answers_not_started": answers["not_started"],
        "answers_total": answers["total"],
        "evaluations_done": evaluations_done,
        "evaluations_not_started": evaluations_not_started,
        "evaluations_total": evaluations_total,
        "spent": float(answers["spent"] + evaluations["spent"]),
        "unpriced_calls": answers["unpriced"] + evaluations["unpriced"],
        "stopped": experiment.stopped_reason,
        "finished": experiment.run_id is not None and answers["unfinished"] == 0 and evaluations["pending"] == 0,
    }


def workspace_by_name_or_id(value: str | None) -> Workspace:
    """The command line's workspace: by id or exact name; may be left out when the lab has only one."""
    if value is None:
        workspaces = list(Workspace.objects.order_by("pk")[:2])
        if len(workspaces) == 1:
            return workspaces[0]
        names = ", ".join(Workspace.objects.order_by("name").values_list("name", flat=True)[:20]) or "none yet"
        raise ValidationError(f"name the workspace (by name or id); this lab has: {names}.")
    found = list(Workspace.objects.filter(pk=int(value)) if value.isdigit() else Workspace.objects.filter(name=value))
    if len(found) != 1:
        raise ValidationError(f"{'no' if not found else 'more than one'} workspace {value!r}; use its id.")
    return found[0]


def workspace_member(workspace: Workspace, username: str):
    """The member of the workspace with this username, or None."""
    membership = Membership.objects.filter(workspace=workspace, user__username=username).select_related("user")
    found = membership.first()
    return found.user if found else None


def workspace_owner(workspace: Workspace):
    """Who the command line acts as: the workspace's first owner."""
    membership = Membership.objects.filter(workspace=workspace, role=Role.OWNER).order_by("pk").first()
    return membership.user if membership else None
