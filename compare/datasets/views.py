"""Dataset pages: a workspace's datasets, import with a preview (CSV, JSON, JSONL, YAML), and one dataset's page to
rename it, edit, add and delete rows. Thin: the rules are in compare.datasets.services and files."""

from __future__ import annotations

import json

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST, require_safe

from lab.access import membership_for_user
from lab.models import Role

from .. import selectors
from ..access import dataset_for_user, dataset_row
from ..models import Dataset
from . import files, services
from .forms import DatasetImportForm, DatasetRowForm, DatasetUploadForm


@login_required
@require_safe
def dataset_list(request, pk):
    return _list_page(request, pk)


def _list_page(request, pk, upload: DatasetUploadForm | None = None, errors=(), status=200):
    """The list with the upload form; the import views show it again with their form and problems."""
    membership = membership_for_user(request.user, pk)
    workspace = membership.workspace
    context = {
        "workspace": workspace,
        "can_edit": membership.allows(Role.EDITOR),
        "datasets": selectors.datasets_for_user(request.user, workspace=workspace.pk),
        "upload": upload or DatasetUploadForm(),
        "errors": list(errors),
    }
    return render(request, "compare/datasets/list.html", context, status=status)


@login_required
@require_POST
def dataset_preview(request, pk):
    """What the uploaded file would become; the import is confirmed on the preview."""
    workspace = membership_for_user(request.user, pk, Role.EDITOR).workspace
    upload = DatasetUploadForm(request.POST, request.FILES)
    if not upload.is_valid():
        return _list_page(request, pk, upload=upload, status=400)
    file = upload.cleaned_data["file"]
    source = file.name if file else "the pasted rows"
    kind = upload.cleaned_data["format"] or files.format_for(source)
    try:
        if kind is None:
            raise ValidationError({"format": f"{source}: choose the format (the extension does not say)."})
        if kind == files.ZIP and file:
            # A zip's images cannot travel back through a preview page: every check is made, then it is imported.
            name = upload.cleaned_data["name"]
            dataset = services.dataset_import(
                workspace=workspace, user=request.user, name=name, content=file.read(), format=kind
            )
            messages.success(request, f"Imported {dataset.rows.count()} rows with their images.")
            return redirect("compare:dataset", dataset.pk)
        content = files.decode(file.read()) if file else upload.cleaned_data["text"]
        preview = files.dataset_preview(content=content, format=kind)
    except ValidationError as exc:
        return _list_page(request, pk, upload=upload, errors=exc.messages, status=400)
    confirm = DatasetImportForm(initial={"name": upload.cleaned_data["name"], "format": kind, "content": content})
    return render(
        request,
        "compare/datasets/preview.html",
        {"workspace": workspace, "can_edit": True, "preview": preview, "confirm": confirm, "file_name": source},
    )


@login_required
@require_POST
def dataset_import(request, pk):
    workspace = membership_for_user(request.user, pk, Role.EDITOR).workspace
    form = DatasetImportForm(request.POST)
    if not form.is_valid():
        return _list_page(
            request, pk, errors=["The preview did not come back whole; upload the file again."], status=400
        )
    try:
        dataset = services.dataset_import(workspace=workspace, user=request.user, **form.cleaned_data)
    except ValidationError as exc:
        return _list_page(request, pk, errors=exc.messages, status=400)
    messages.success(request, f"Imported {dataset.rows.count()} rows.")
    return redirect("compare:dataset", dataset.pk)


@login_required
@require_safe
def dataset_detail(request, pk):
    dataset = dataset_for_user(request.user, pk)
    membership = membership_for_user(request.user, dataset.workspace_id)
    rows = list(dataset.rows.order_by("position"))
    for row in rows:
        row.vars_json = json.dumps(row.vars, ensure_ascii=False, indent=2)
    return render(
        request,
        "compare/datasets/detail.html",
        {
            "workspace": dataset.workspace,
            "can_edit": membership.allows(Role.EDITOR),
            "dataset": dataset,
            "rows": rows,
            "new_row": DatasetRowForm(),
            "variables": list(dict.fromkeys(name for row in rows for name in row.vars)),
        },
    )


def _done(request, dataset: Dataset, action, success: str):
    """Run a dataset service; its error, or the success, is shown on the dataset's page."""
    try:
        action()
    except ValidationError as exc:
        for message in exc.messages:
            messages.error(request, message)
    else:
        messages.success(request, success)
    return redirect("compare:dataset", dataset.pk)


@login_required
@require_POST
def dataset_rename(request, pk):
    dataset = dataset_for_user(request.user, pk, write=True)
    name = request.POST.get("name", "")
    return _done(request, dataset, lambda: services.dataset_update(dataset=dataset, name=name), "Renamed.")


@login_required
@require_POST
def dataset_row_save(request, pk, position):
    dataset = dataset_for_user(request.user, pk, write=True)
    row, form = dataset_row(dataset, position), DatasetRowForm(request.POST)
    if not form.is_valid():
        messages.error(request, f"Row {position}: " + " ".join(e for errors in form.errors.values() for e in errors))
        return redirect("compare:dataset", dataset.pk)
    return _done(
        request,
        dataset,
        lambda: services.dataset_row_update(row=row, **form.cleaned_data),
        f"Row {position} saved.",
    )


@login_required
@require_POST
def dataset_row_add(request, pk):
    dataset = dataset_for_user(request.user, pk, write=True)
    form = DatasetRowForm(request.POST)
    if not form.is_valid():
        messages.error(request, "New row: " + " ".join(e for errors in form.errors.values() for e in errors))
        return redirect("compare:dataset", dataset.pk)
    add = lambda: services.dataset_rows_append(dataset=dataset, rows=[form.cleaned_data])  # noqa: E731
    return _done(request, dataset, add, "Row added.")


@login_required
@require_POST
def dataset_row_delete(request, pk, position):
    dataset = dataset_for_user(request.user, pk, write=True)
    row = dataset_row(dataset, position)
    return _done(request, dataset, lambda: services.dataset_row_delete(row=row), f"Row {position} deleted.")


@login_required
@require_POST
def dataset_delete(request, pk):
    dataset = dataset_for_user(request.user, pk, write=True)
    workspace_id, name = dataset.workspace_id, dataset.name
    services.dataset_delete(dataset=dataset)
    messages.success(request, f"Deleted the dataset {name}.")
    return redirect("compare:datasets", workspace_id)
