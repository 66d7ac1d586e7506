"""Experiment pages: the list; new (upload a file, or build one in a form); the estimate to confirm; the experiment's
page with live progress, the results grid with filters and grouped averages; its progress as JSON; its export.

Thin: forms make the same data an experiment file holds, and the experiment services check, create and start it.
The page follows the run over the group's socket (`progress` events) and reads the record over HTTP.
"""

from __future__ import annotations

import json
from decimal import Decimal

from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import HttpResponse, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST, require_safe

from lab.access import membership_for_user
from lab.catalog import workspace_models
from lab.models import Role

from ..access import experiment_for_user, group_for_user
from ..assertions.selectors import group_pass_rates
from ..datasets.files import decode
from ..models import MAX_EXPERIMENT_VARIANTS
from .config import config_from_data, config_read
from .export import export_yaml, group_export
from .files import UploadedFiles
from .form_errors import errors_placed
from .forms import BuildForm, ParamSetFormSet, PromptFormSet, UploadForm, filled
from .promptfoo import store as promptfoo_store
from .promptfoo.command import promptfoo_read
from .results import GROUPINGS, experiment_results
from .selectors import experiment_progress, experiments_for_user
from .services import experiment_create, experiment_plan, experiment_start
from .spec import ConfigError, ExperimentConfig


@login_required
@require_safe
def experiment_list(request, pk):
    membership = membership_for_user(request.user, pk)
    experiments = experiments_for_user(request.user, workspace=membership.workspace_id).prefetch_related(
        "group__variants"
    )[:100]
    return render(
        request,
        "compare/experiments/list.html",
        {
            "workspace": membership.workspace,
            "can_edit": membership.allows(Role.EDITOR),
            "experiments": experiments,
        },
    )


@login_required
@require_safe
def experiment_new(request, pk):
    workspace = membership_for_user(request.user, pk, Role.EDITOR).workspace
    return _new_page(request, workspace)


def _new_page(request, workspace, *, upload=None, build=None, params=None, prompts=None, errors=(), status=200):
    models = [model["id"] for model in workspace_models(workspace, user=request.user)]
    context = {
        "workspace": workspace,
        "can_edit": True,
        "upload": upload or UploadForm(),
        "build": build or BuildForm(workspace=workspace, model_choices=models),
        "param_sets": params or ParamSetFormSet(prefix="params"),
        "prompts": prompts or PromptFormSet(prefix="prompts"),
        "errors": list(errors),
        "catalog": models,
    }
    return render(request, "compare/experiments/new.html", context, status=status)


@login_required
@require_POST
def experiment_estimate(request, pk):
    """Check the upload or the form and show what it will run and cost; nothing is saved yet."""
    workspace = membership_for_user(request.user, pk, Role.EDITOR).workspace
    if request.POST.get("kind") == "upload":
        upload = UploadForm(request.POST, request.FILES)
        if not upload.is_valid():
            return _new_page(request, workspace, upload=upload, status=400)
        config_file = upload.cleaned_data["config"]
        files = UploadedFiles({f.name: f.read() for f in upload.cleaned_data["files"]})
        budget, source = upload.cleaned_data["budget"], config_file.name
        try:
            text = decode(config_file.read())
            # A promptfoo config runs as the experiment it translates to, on the workspace's connections of the
            # providers' names (openai, anthropic, gemini, openrouter, ollama).
            promptfoo = promptfoo_read(text, source=source, files=files)
            if promptfoo is None:
                config = config_read(text, source=source, files=files, workspace=workspace)
            else:
                config = config_from_data(promptfoo.data, source=source, files=files, workspace=workspace)
            plan, estimate = experiment_plan(config=config, workspace=workspace)
        except (ConfigError, ValidationError) as exc:
            return _new_page(request, workspace, upload=upload, errors=exc.messages, status=400)
    else:
        promptfoo = None
        models = [model["id"] for model in workspace_models(workspace, user=request.user)]
        build = BuildForm(request.POST, workspace=workspace, model_choices=models)
        params = ParamSetFormSet(request.POST, prefix="params")
        prompts = PromptFormSet(request.POST, prefix="prompts")
        if request.POST.get("add") in ("params", "prompts"):  # "Add a prompt" without the page's script
            return _added_row_page(request, workspace, models, build, params, prompts)
        forms_valid = all([build.is_valid(), params.is_valid(), prompts.is_valid()])
        if not forms_valid:
            return _new_page(request, workspace, build=build, params=params, prompts=prompts, status=400)
        budget, source = build.cleaned_data["budget"], "form"
        (param_rows, param_forms), (prompt_rows, prompt_forms) = filled(params), filled(prompts)
        data = build.config_data(param_rows, prompt_rows)
        try:
            config = config_from_data(data, source=source, files=UploadedFiles({}), workspace=workspace)
            plan, estimate = experiment_plan(config=config, workspace=workspace)
        except ConfigError as exc:
            sections = {"model-parameters": params, "prompts": prompts}
            unplaced = errors_placed(
                exc.messages, source=source, build=build, params=param_forms, prompts=prompt_forms, sections=sections
            )
            return _new_page(
                request, workspace, build=build, params=params, prompts=prompts, errors=unplaced, status=400
            )
    return render(
        request,
        "compare/experiments/estimate.html",
        {
            "workspace": workspace,
            "can_edit": True,
            "config": config,
            "estimate": estimate,
            "labels": [f"{c.model} · {c.params.name} · {c.prompt.name}" for c in config.combinations],
            "rows": plan.rows,
            "data": json.dumps(config.as_data()),
            "source": source,
            "budget": budget,
            "promptfoo": promptfoo,
            "assertions": promptfoo_store.as_json(promptfoo) if promptfoo else "",
        },
    )


@login_required
@require_POST
def experiment_run(request, pk):
    """Save the confirmed experiment and start it; its page shows the progress."""
    workspace = membership_for_user(request.user, pk, Role.EDITOR).workspace
    source = request.POST.get("source", "form")[:300]
    try:
        budget = Decimal(request.POST["budget"]) if request.POST.get("budget") else None
        config = _confirmed(request.POST.get("config", ""), source)
        # A promptfoo config's tests' assertions, carried through the estimate page and checked again.
        assertions = promptfoo_store.from_json(request.POST["assertions"]) if request.POST.get("assertions") else None
        experiment = experiment_create(
            workspace=workspace, user=request.user, config=config, source=source, budget=budget
        )
        if assertions is not None:
            promptfoo_store.row_assertions_store(experiment=experiment, rows=assertions)
        experiment_start(experiment=experiment, user=request.user)
    except (ConfigError, ValidationError, ArithmeticError) as exc:
        messages = getattr(exc, "messages", None) or ["The budget is not an amount of dollars."]
        return _new_page(request, workspace, errors=messages, status=400)
    return redirect("compare:experiment", experiment.group_id)


def _added_row_page(request, workspace, models, build, params, prompts):
    """The same page again, filled in as posted, with one more empty row where the pressed "add" button says (the
    script adds rows in the page; this is the same without it). Nothing is checked yet, so no problem is shown."""

    def values(form) -> dict:
        return {field.name: field.value() for field in form}

    def rows(formset, adding: bool) -> list[dict]:
        """The posted rows as initial values; the formset adds one empty row after them, so the formset not being
        added to gives up its last row when that is empty (it keeps as many rows as it had)."""
        found = [values(f) for f in formset] if formset.management_form.is_valid() else []
        if not adding and found and not any(v not in (None, "", False) for v in found[-1].values()):
            found.pop()
        return found[: MAX_EXPERIMENT_VARIANTS - 1]

    adding = request.POST["add"]
    return _new_page(
        request,
        workspace,
        build=BuildForm(initial=values(build), workspace=workspace, model_choices=models),
        params=ParamSetFormSet(initial=rows(params, adding == "params"), prefix="params"),
        prompts=PromptFormSet(initial=rows(prompts, adding == "prompts"), prefix="prompts"),
    )


def _confirmed(text: str, source: str) -> ExperimentConfig:
    """The experiment the estimate page showed, as data; checked again, as anything from a browser must be."""
    try:
        data = json.loads(text)
    except ValueError:
        raise ConfigError([f"{source}: the confirmed experiment did not come back whole; estimate it again."]) from None
    return config_from_data(data, source=source, files=UploadedFiles({}))


@login_required
@require_safe
def experiment_detail(request, pk):
    experiment = experiment_for_user(request.user, pk)
    results = experiment_results(experiment)
    averages = [(title, results.averages[key]) for key, title in GROUPINGS]
    averages.append(("Combination", results.averages["combination"]))
    return render(
        request,
        "compare/experiments/detail.html",
        {
            "workspace": experiment.group.workspace,
            "can_edit": membership_for_user(request.user, experiment.group.workspace_id).allows(Role.EDITOR),
            "experiment": experiment,
            "group": experiment.group,
            "results": results,
            "averages": averages,
            "progress": experiment_progress(experiment),
            "pass_rates": group_pass_rates(experiment.group) if experiment.group.assertions else None,
            "scale_top": results.scale.split("-")[-1] if "-" in results.scale else "1",
            "filters": {
                key: sorted({getattr(c, key) for c in results.combos}) for key in ("model", "parameters", "prompt")
            },
        },
    )


@login_required
@require_safe
def experiment_status(request, pk):
    return JsonResponse(experiment_progress(experiment_for_user(request.user, pk)))


@login_required
@require_safe
def experiment_export(request, pk):
    group = group_for_user(request.user, pk)
    response = HttpResponse(export_yaml(group_export(group)), content_type="application/yaml; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="experiment-{group.pk}.yaml"'
    return response
