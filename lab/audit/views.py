"""The audit log page and its CSV export; owners only."""

import csv
import json

from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_safe

from ..access import membership_for_user
from ..models import Role
from .models import Action
from .selectors import audit_entries

CSV_COLUMNS = ["time", "actor", "action", "target_type", "target_id", "target", "details"]


@login_required
@require_safe
def audit_log(request, pk):
    workspace = membership_for_user(request.user, pk, role=Role.OWNER).workspace
    action = request.GET.get("action", "")
    action = action if action in Action.values else ""
    page = Paginator(audit_entries(workspace=workspace, action=action).select_related("actor"), 100).get_page(
        request.GET.get("page")
    )
    return render(
        request,
        "lab/audit.html",
        {
            "workspace": workspace,
            "page": page,
            "actions": Action.choices,
            "action": action,
            "retention_days": settings.AUDIT_RETENTION_DAYS,
        },
    )


@login_required
@require_safe
def audit_csv(request, pk):
    workspace = membership_for_user(request.user, pk, role=Role.OWNER).workspace
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="audit-workspace-{workspace.pk}.csv"'
    writer = csv.writer(response)
    writer.writerow(CSV_COLUMNS)
    for entry in audit_entries(workspace=workspace).iterator():
        writer.writerow(
            [
                entry.created_at.isoformat(),
                _cell(entry.actor_name),
                entry.action,
                entry.target_type,
                entry.target_id,
                _cell(entry.target_name),
                _cell(json.dumps(entry.details, sort_keys=True)),
            ]
        )
    return response


def _cell(text: str) -> str:
    """A spreadsheet runs a cell that starts with = + - @ as a formula; a leading quote keeps it text."""
    return "'" + text if text[:1] in ("=", "+", "-", "@") else text
