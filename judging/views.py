"""Judging pages: the judges of a workspace, the editor, a judge's diagnostics, and a round's verdict panel.

The verdict panel is a fragment the comparison page fetches by URL; "Judge this round" posts back to it and
gets the panel again, now showing the verdict as queued.
"""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from compare.access import round_for_user
from lab.access import membership_for_user
from lab.models import Role, Workspace
from lab.views import add_service_errors

from . import selectors, services
from .access import judge_for_user, judge_from_body
from .forms import JudgeForm, MetricFormSet, RoundJudgeForm
from .models import JudgeConfig
from .rubric import DEFAULT_METRICS, PLACEHOLDERS


@login_required
@require_safe
def judge_list(request, pk):
    membership = membership_for_user(request.user, pk)
    workspace = membership.workspace
    context = {
        "workspace": workspace,
        "judges": selectors.judges_of(workspace),
        "can_edit": membership.allows(Role.EDITOR),
    }
    return render(request, "judging/list.html", context)


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def judge_new(request, pk):
    workspace = membership_for_user(request.user, pk, Role.EDITOR).workspace
    return _editor(request, workspace, None)


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def judge_edit(request, pk):
    judge = judge_for_user(request.user, pk, write=True)
    return _editor(request, judge.workspace, judge)


def _editor(request, workspace: Workspace, judge: JudgeConfig | None):
    initial = {"name": judge.name, "model": judge.model, "scale": judge.scale, "mode": judge.mode} if judge else {}
    if judge:
        initial |= {"prompt": judge.prompt, "seed": judge.seed, "lenient_replies": judge.lenient_replies}
        initial |= {"conversation": judge.conversation}
        initial |= JudgeForm.initial_of(judge)
    metrics = judge.metrics if judge else [metric.as_dict() for metric in DEFAULT_METRICS]
    form = JudgeForm(request.POST or None, initial=initial)
    formset = MetricFormSet(request.POST or None, initial=metrics, prefix="metrics")
    metric_errors: list[str] = []
    if request.method == "POST" and form.is_valid() and formset.is_valid():
        kept = [row for row in formset.cleaned_data if row and not row.get("DELETE")]
        fields = {**form.service_fields(), "metrics": [{k: v for k, v in row.items() if k != "DELETE"} for row in kept]}
        try:
            if judge:
                judge = services.judge_config_update(judge=judge, **fields)
            else:
                judge = services.judge_config_create(workspace=workspace, user=request.user, **fields)
        except ValidationError as exc:
            errors = exc.message_dict
            metric_errors = errors.pop("metrics", [])
            add_service_errors(form, ValidationError(errors))
        else:
            messages.success(request, f"Judge “{judge.name}” saved.")
            return redirect("judging:detail", pk=judge.pk)
    context = {
        "workspace": workspace,
        "judge": judge,
        "form": form,
        "formset": formset,
        "metric_errors": metric_errors,
        "placeholders": PLACEHOLDERS,
        "models": selectors.judge_model_choices(workspace),
    }
    return render(request, "judging/editor.html", context)


@login_required
@require_safe
def judge_detail(request, pk):
    judge = judge_for_user(request.user, pk)
    membership = membership_for_user(request.user, judge.workspace_id)
    context = {
        "workspace": judge.workspace,
        "judge": judge,
        "rubric": judge.rubric(),
        "diagnostics": selectors.judge_diagnostics(judge),
        "can_edit": membership.allows(Role.EDITOR),
    }
    return render(request, "judging/detail.html", context)


@login_required
@require_POST
def judge_delete(request, pk):
    judge = judge_for_user(request.user, pk, write=True)
    workspace_id = judge.workspace_id
    services.judge_config_delete(judge=judge)
    messages.success(request, f"Judge “{judge.name}” deleted; its verdicts are kept.")
    return redirect("judging:list", pk=workspace_id)


@login_required
@require_safe
def verdict_panel(request, pk):
    round_ = round_for_user(request.user, pk)
    return _panel(request, round_)


def _panel(request, round_, error: list[str] | None = None, status: int = 200):
    workspace = round_.group.workspace
    membership = membership_for_user(request.user, workspace.pk)
    context = {
        "panel": selectors.verdict_panel(round_, request.user),
        "judges": selectors.judges_of(workspace),
        "group_judge": selectors.group_judge_id(round_.group_id),
        "can_judge": membership.allows(Role.EDITOR),
        "errors": error or [],
    }
    return render(request, "judging/_verdict_panel.html", context, status=status)


@login_required
@require_POST
def round_judge(request, pk):
    """'Judge this round': queue a verdict and answer with the panel (400 with the reasons when refused)."""
    round_ = round_for_user(request.user, pk, write=True)
    form = RoundJudgeForm(request.POST)
    try:
        if not form.is_valid():
            raise ValidationError({"judge": "Choose a judge."})
        judge = judge_from_body(form.cleaned_data["judge"], round_.group.workspace)
        if form.cleaned_data["allow_same_family"] and judge is not None:
            services.group_judge_set(group=round_.group, judge=judge, allow_same_family=True, user=request.user)
        services.verdict_request(round=round_, user=request.user, judge=judge)
    except ValidationError as exc:
        return _panel(request, round_, exc.messages, status=400)
    return _panel(request, round_)
