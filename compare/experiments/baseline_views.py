"""The baseline comparison page of an experiment run: the verdict, the score change and each paired answer's diff
(the same figures the command line prints), with "pin as baseline" and "compare with" another run."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST, require_safe

from lab.access import membership_for_user
from lab.models import Role

from ..access import experiment_for_user, group_for_user
from .baseline import (
    baseline_compare,
    baseline_of,
    baseline_pin,
    baseline_resolve,
    experiment_baseline_set,
    pinned_baseline,
    workspace_runs,
)

RUN_CHOICES = 100  # the newest runs offered in "compare with"


@login_required
@require_safe
def baseline_page(request, pk):
    experiment = experiment_for_user(request.user, pk)
    workspace = experiment.group.workspace
    baseline = baseline_of(experiment)
    runs = workspace_runs(workspace, exclude=experiment).order_by("-created_at")[:RUN_CHOICES]
    return render(
        request,
        "compare/experiments/baseline.html",
        {
            "workspace": workspace,
            "can_edit": membership_for_user(request.user, workspace.pk).allows(Role.EDITOR),
            "experiment": experiment,
            "group": experiment.group,
            "baseline": baseline,
            "pinned": pinned_baseline(experiment),
            "comparison": baseline_compare(baseline=baseline, current=experiment) if baseline else None,
            "runs": runs,
        },
    )


@login_required
@require_POST
def baseline_choose(request, pk):
    """Compare this run with another one (by comparison id, or "latest")."""
    group = group_for_user(request.user, pk, write=True)
    experiment = experiment_for_user(request.user, group.pk)
    try:
        baseline = baseline_resolve(
            workspace=group.workspace, name=group.title, value=request.POST.get("baseline", ""), exclude=experiment
        )
        experiment_baseline_set(experiment=experiment, baseline=baseline)
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    return redirect("compare:experiment_baseline", group.pk)


@login_required
@require_POST
def baseline_pin_page(request, pk):
    group = group_for_user(request.user, pk, write=True)
    experiment = experiment_for_user(request.user, group.pk)
    try:
        baseline_pin(experiment=experiment, user=request.user)
        messages.success(request, f'Pinned as the baseline of "{group.title}" (what --baseline latest compares with).')
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    return redirect("compare:experiment_baseline", group.pk)
