"""Lab pages: the workspace overview and its settings (members, connections); accounts are allauth's."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST, require_safe

from . import catalog, services
from .access import connection_for_user, member_for_user, membership_for_user, workspaces_of
from .forms import ConnectionForm, MemberForm, WorkspaceForm
from .invitations.views import InvitationForm
from .jobs.workers import worker_status
from .models import Role
from .providers.base import ProviderError


def add_service_errors(form, error: ValidationError) -> None:
    """Show a service's field errors on the form fields they name."""
    for field, field_messages in error.message_dict.items():
        form.add_error(field if field in form.fields else None, field_messages)


@login_required
@require_safe
def workspace_switch(request, pk):
    membership = membership_for_user(request.user, pk)
    request.session["workspace_id"] = membership.workspace_id
    return redirect("home")


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def workspace_new(request):
    form = WorkspaceForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            workspace = services.workspace_create(owner=request.user, name=form.cleaned_data["name"])
        except ValidationError as exc:
            add_service_errors(form, exc)
        else:
            request.session["workspace_id"] = workspace.pk
            return redirect("lab:settings", pk=workspace.pk)
    return render(request, "lab/workspace_new.html", {"form": form})


def current_workspace_id(request) -> int | None:
    """The workspace a person last chose, if they still belong to it, else their first."""
    mine = workspaces_of(request.user)
    chosen = request.session.get("workspace_id")
    if chosen and mine.filter(pk=chosen).exists():
        return chosen
    first = mine.order_by("name").first()
    return first.pk if first else None


@login_required
@require_safe
def workspace_settings(request, pk):
    membership = membership_for_user(request.user, pk)
    request.session["workspace_id"] = membership.workspace_id
    workspace = membership.workspace
    is_owner = membership.allows(Role.OWNER)
    return render(
        request,
        "lab/settings.html",
        {
            "workspace": workspace,
            "membership": membership,
            "is_owner": is_owner,
            "can_edit": membership.allows(Role.EDITOR),
            "members": workspace.memberships.select_related("user").order_by("user__username"),
            "roles": Role.choices,
            "connections": workspace.connections.visible_to(request.user),
            "member_form": MemberForm(),
            "connection_form": ConnectionForm(),
            "invitation_form": InvitationForm(),
            "invitations": workspace.invitations.select_related("created_by")[:50] if is_owner else [],
            "worker": worker_status(checked_at=workspace.worker_seen_at),
        },
    )


@login_required
@require_POST
def member_add(request, pk):
    workspace = membership_for_user(request.user, pk, role=Role.OWNER).workspace
    form = MemberForm(request.POST)
    if form.is_valid():
        try:
            services.membership_add(workspace=workspace, actor=request.user, **form.cleaned_data)
        except ValidationError as exc:
            add_service_errors(form, exc)
    _flash_form(request, form, f"{form.cleaned_data.get('username', '')} is now a member.")
    return redirect("lab:settings", pk=workspace.pk)


@login_required
@require_POST
def member_change(request, pk, user_id):
    """An owner changes a member's role, or removes them (`remove` in the form)."""
    membership = member_for_user(request.user, pk, user_id)
    workspace = membership.workspace
    try:
        if "remove" in request.POST:
            services.membership_remove(membership=membership, actor=request.user)
            messages.success(request, f"{membership.user.username} is no longer a member.")
        else:
            role = request.POST.get("role", "")
            services.membership_add(
                workspace=workspace, username=membership.user.username, role=role, actor=request.user
            )
            messages.success(request, f"{membership.user.username} is now {role}.")
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    if membership.user_id == request.user.id and "remove" in request.POST:
        return redirect("home")
    return redirect("lab:settings", pk=workspace.pk)


@login_required
@require_POST
def connection_add(request, pk):
    workspace = membership_for_user(request.user, pk, role=Role.OWNER).workspace
    form = ConnectionForm(request.POST)
    if form.is_valid():
        try:
            services.connection_create(workspace=workspace, actor=request.user, **form.cleaned_data)
        except ValidationError as exc:
            add_service_errors(form, exc)
    _flash_form(request, form, "Connection added.")
    return redirect("lab:settings", pk=workspace.pk)


@login_required
@require_POST
def connection_remove(request, pk, connection_id):
    connection = connection_for_user(request.user, pk, connection_id, role=Role.OWNER)
    services.connection_delete(connection=connection, actor=request.user)
    messages.success(request, f"Connection {connection.name} removed.")
    return redirect("lab:settings", pk=pk)


@login_required
@require_POST
def connection_refresh_models(request, pk, connection_id):
    connection = connection_for_user(request.user, pk, connection_id, role=Role.EDITOR)
    try:
        models = catalog.connection_models_refresh(connection=connection)
    except ProviderError as exc:
        messages.error(request, f"Could not refresh the models of {connection.name}: {exc}")
    else:
        messages.success(request, f"{connection.name}: {len(models)} models.")
    return redirect("lab:settings", pk=pk)


def _flash_form(request, form, success: str) -> None:
    """Forms on the settings page post and redirect back, so their errors travel as messages naming the field."""
    if not form.errors:
        messages.success(request, success)
        return
    for field, errors in form.errors.items():
        label = form[field].label if field in form.fields else ""
        for error in errors:
            messages.error(request, f"{label}: {error}" if label else error)
