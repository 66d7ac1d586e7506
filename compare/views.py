"""Comparison pages: the workspace history, the editor (new, clone and edit) and the live comparison page.

Thin: each view reaches its objects through the access helpers and reads through page_selectors; the editor's
"save and run" calls the services. Votes and the report come from the voting app, fetched by URL in the page.
"""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.core.paginator import Paginator
from django.http import Http404, JsonResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_POST, require_safe
from rest_framework.exceptions import ParseError
from rest_framework.exceptions import ValidationError as DRFValidationError

from lab.access import membership_for_user
from lab.api.parsers import checked_json
from lab.models import Role
from lab.providers.params import set_params

from . import page_selectors, selectors, services
from .access import dataset_from_body, group_for_user
from .api.groups import ParamsIn
from .assertions.selectors import failing_rounds, group_pass_rates
from .blind import comparison_revealed, may_reveal
from .forms import EditorSaveIn, HistoryFilterForm
from .models import DEFAULT_STAGGER_MS, DEFAULT_TIMEOUT_MS, MAX_VARIANTS, CompareGroup
from .prompts.selectors import editor_versions, workspace_prompts
from .rounds.start import MAX_REPEAT

HISTORY_PAGE_SIZE = 25


@login_required
@require_safe
def history(request, pk):
    membership = membership_for_user(request.user, pk)
    if request.session.get("workspace_id") != membership.workspace_id:  # the switcher's "current" workspace
        request.session["workspace_id"] = membership.workspace_id
    workspace = membership.workspace
    authors = workspace.memberships.order_by("user__username").values_list("user_id", "user__username")
    form = HistoryFilterForm(request.GET, models=page_selectors.history_models(workspace), authors=list(authors))
    filters = form.filters()
    groups = Paginator(page_selectors.history(workspace, **filters), HISTORY_PAGE_SIZE)
    return render(
        request,
        "compare/history.html",
        {
            "workspace": workspace,
            "can_edit": membership.allows(Role.EDITOR),
            "form": form,
            "filtered": bool(filters),
            "page": groups.get_page(request.GET.get("page")),
            "simulated": page_selectors.simulated_connections(workspace),
        },
    )


@login_required
@require_safe
def editor_new(request, pk):
    workspace = membership_for_user(request.user, pk, Role.EDITOR).workspace
    return _editor(request, workspace, None)


@login_required
@require_safe
def editor_clone(request, pk):
    """Clone and edit: the editor filled with a group's settings; saving creates a new group."""
    group = group_for_user(request.user, pk, write=True)
    return _editor(request, group.workspace, group)


def _editor(request, workspace, source: CompareGroup | None):
    return render(
        request,
        "compare/editor.html",
        {
            "workspace": workspace,
            "can_edit": True,
            "source": source,
            "initial": page_selectors.editor_initial(source),
            "limits": {
                "max_variants": MAX_VARIANTS,
                "max_repeat": MAX_REPEAT,
                "default_timeout_ms": DEFAULT_TIMEOUT_MS,
                "default_stagger_ms": DEFAULT_STAGGER_MS,
            },
            "versions": editor_versions(workspace),
            "datasets": selectors.datasets_for_user(request.user, workspace=workspace.pk),
        },
    )


@login_required
@require_POST
def editor_save(request, pk):
    """Create the group and answer where to watch it run.

    The comparison page starts the rounds itself (through the runs API) once its socket is live, so the first
    tokens of every answer are seen streaming rather than missed while the browser moves between pages.
    """
    workspace = membership_for_user(request.user, pk, Role.EDITOR).workspace
    try:
        data = EditorSaveIn(data=_json_body(request))
    except DRFValidationError as exc:
        return _refused(exc, "errors")
    if not data.is_valid():
        return JsonResponse({"errors": _messages(data.errors)}, status=400)
    fields = dict(data.validated_data)
    repeat, cloned_from = fields.pop("repeat"), fields.pop("cloned_from")
    source = group_for_user(request.user, cloned_from) if cloned_from else None
    if source is not None and source.workspace_id != workspace.pk:
        raise Http404("No such comparison.")
    try:
        fields["dataset"] = dataset_from_body(fields["dataset"], workspace)
        group = services.group_create(workspace=workspace, user=request.user, cloned_from=source, **fields)
    except ValidationError as exc:
        return JsonResponse({"errors": exc.message_dict}, status=400)
    # With a dataset the page runs one round per row (the runs API's rule) instead of `repeat` rounds.
    start = {"dataset": group.dataset_id} if group.dataset_id else {"repeat": repeat}
    return JsonResponse({"group": group.pk, "url": reverse("compare:detail", args=[group.pk]), **start}, status=201)


@login_required
@require_POST
def editor_check(request, pk):
    """The parameter check before running: which chosen model refuses which set parameter."""
    workspace = membership_for_user(request.user, pk).workspace
    try:
        body = _json_body(request)
    except DRFValidationError as exc:
        return _refused(exc, "problems")
    params = ParamsIn(data=body.get("params") or {})
    if not params.is_valid():
        problems = [f"{name}: {m}" for name, messages in _messages(params.errors).items() for m in messages]
        return JsonResponse({"problems": problems})
    models = [str(model) for model in (body.get("models") or [])[:MAX_VARIANTS]]
    problems = page_selectors.params_problems(workspace, set_params(params.validated_data), models)
    return JsonResponse({"problems": problems})


@login_required
@require_safe
def detail(request, pk, number=None):
    group = group_for_user(request.user, pk)
    membership = membership_for_user(request.user, group.workspace_id)
    failing = request.GET.get("failing") == "1"
    # "Only rounds with a failing assertion": the page opens on the latest of them and lists them all.
    round_ = (
        failing_rounds(group).order_by("-number").first()
        if failing and number is None
        else page_selectors.group_round(group, number)
    )
    return render(
        request,
        "compare/detail.html",
        {
            "group": group,
            "workspace": group.workspace,
            "can_edit": membership.allows(Role.EDITOR),
            "variants": list(group.variants.select_related("prompt_version__prompt")),
            "library": workspace_prompts(group.workspace),
            "datasets": selectors.datasets_for_user(request.user, workspace=group.workspace_id),
            "simulated": page_selectors.simulated_connections(group.workspace),
            "view": page_selectors.round_view(round_, request.user) if round_ else None,
            "revealed": comparison_revealed(group),
            "may_reveal": may_reveal(group, request.user),
            # Per variant, so only once names show (a blind comparison's figures wait for the reveal).
            "validity": selectors.schema_validity(group) if not group.blind or comparison_revealed(group) else [],
            "pass_rates": group_pass_rates(group) if group.assertions or failing else None,
            "failing": failing,
            "failing_numbers": list(failing_rounds(group).order_by("number").values_list("number", flat=True)[:200])
            if failing
            else [],
        },
    )


@login_required
@require_POST
def reveal(request, pk):
    """The comparison page's "reveal to everyone": ends a blind comparison's blind voting."""
    group = group_for_user(request.user, pk)
    try:
        services.group_reveal(group=group, user=request.user)
        messages.success(request, "Revealed: everyone now sees which answer was whose.")
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    return redirect("compare:detail", group.pk)


@login_required
@require_safe
def round_partial(request, pk, number):
    """The round region of the comparison page, for switching rounds and re-syncing after a missed event."""
    group = group_for_user(request.user, pk)
    round_ = page_selectors.group_round(group, number)
    return render(
        request,
        "compare/_round.html",
        {
            "group": group,
            "simulated": page_selectors.simulated_connections(group.workspace),
            "view": page_selectors.round_view(round_, request.user),
            "can_edit": membership_for_user(request.user, group.workspace_id).allows(Role.EDITOR),
        },
    )


def _json_body(request) -> dict:
    """The body as a JSON object, checked as the API checks one; {} when it is not JSON. Raises ValidationError
    naming the field for a value the database cannot store or that nests too deep."""
    try:
        body = checked_json(request.body.decode() if request.body else "{}")
    except (UnicodeDecodeError, ParseError):
        return {}
    return body if isinstance(body, dict) else {}


def _refused(exc: DRFValidationError, key: str) -> JsonResponse:
    messages = _messages(exc.detail)
    if key == "problems":
        return JsonResponse({key: [f"{name}: {m}" for name, items in messages.items() for m in items]}, status=400)
    return JsonResponse({key: messages}, status=400)


def _messages(errors) -> dict[str, list[str]]:
    """DRF's nested errors as {field: [message]}, each named by where it is: "Variant 2: message 3: role: …",
    "Shared message 1: content: …" (variants and messages are keyed by position from 1, see VariantListIn), so the
    editor can show each beside its message."""
    flat: dict[str, list[str]] = {}
    for field, value in errors.items():
        flat.setdefault(field, []).extend(_named(value, _COUNTED.get(field, "")))
    return flat


# What a position key counts under each list field (keys are positions from 1).
_COUNTED = {"variants": "Variant", "messages": "message", "shared_messages": "Shared message"}


def _named(value, counted: str) -> list[str]:
    if not isinstance(value, dict):
        return [str(m) for m in value]
    named = []
    for key, inner in value.items():
        if str(key).isdigit() and counted:
            name = f"{counted} {key}"
            named += [f"{name}: {m}" for m in _named(inner, "")]
        else:
            # A list's items name their own position; an error about the whole list keeps the list's name.
            positional = key in _COUNTED and isinstance(inner, dict)
            named += [m if positional else f"{key}: {m}" for m in _named(inner, _COUNTED.get(key, ""))]
    return named
