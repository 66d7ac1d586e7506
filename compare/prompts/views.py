"""Prompt library pages: the list (with "New prompt" and YAML import and export), a prompt with its versions and
the diff of any two (message by message, word by word within a message), adding (as text or as a JSON message list)
and promoting versions, and the answer diff partial of the comparison page.

Thin: objects come through the access helpers, writes through compare.prompts.services. A version's win rate,
rating and judge scores are voting's, fetched by the page from voting's partial URL.
"""

import json

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST, require_safe

from lab.access import membership_for_user
from lab.models import Role

from .. import page_selectors
from ..access import group_for_user, prompt_for_user, prompt_version_for_user, variant_for_user
from ..forms import PromptNewForm
from . import library, services
from .diff import EQUAL, messages_diff, side_by_side
from .selectors import prompt_versions, workspace_prompts

MAX_IMPORT_BYTES = 5 * 2**20


@login_required
@require_safe
def prompt_list(request, pk):
    return _library_page(request, membership_for_user(request.user, pk), PromptNewForm())


def _library_page(request, membership, form: PromptNewForm, status: int = 200):
    workspace = membership.workspace
    context = {
        "workspace": workspace,
        "can_edit": membership.allows(Role.EDITOR),
        "prompts": workspace_prompts(workspace),
        "form": form,
    }
    return render(request, "compare/prompts/list.html", context, status=status)


@login_required
@require_POST
def prompt_new_page(request, pk):
    """A prompt with its first version; on a refusal the library again, each error beside its field (400)."""
    membership = membership_for_user(request.user, pk, Role.EDITOR)
    form = PromptNewForm(request.POST)
    if form.is_valid():
        try:
            prompt = services.prompt_create(workspace=membership.workspace, user=request.user, **form.cleaned_data)
        except ValidationError as exc:
            form.add_service_errors(exc.message_dict)
        else:
            messages.success(request, f"Created {prompt.name} with its first version.")
            return redirect("compare:prompt", prompt.pk)
    return _library_page(request, membership, form, status=400)


@login_required
@require_POST
def library_import_page(request, pk):
    workspace = membership_for_user(request.user, pk, Role.EDITOR).workspace
    upload = request.FILES.get("file")
    if upload is not None and upload.size > MAX_IMPORT_BYTES:
        messages.error(request, f"A library file has at most {MAX_IMPORT_BYTES // 2**20} MB.")
        return redirect("compare:prompts", workspace.pk)
    text = upload.read().decode("utf-8", errors="replace") if upload else request.POST.get("yaml", "")
    try:
        imported = library.library_import(workspace=workspace, user=request.user, text=text)
        messages.success(request, f"Imported {len(imported)} prompt{'s' if len(imported) != 1 else ''}.")
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    return redirect("compare:prompts", workspace.pk)


@login_required
@require_safe
def library_export_page(request, pk):
    workspace = membership_for_user(request.user, pk).workspace
    response = HttpResponse(library.library_export(workspace), content_type="application/yaml; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="prompt-library-{workspace.pk}.yaml"'
    return response


def _number(value, default: int) -> int:
    return int(value) if str(value or "").isdigit() else default


@login_required
@require_safe
def prompt_detail(request, pk):
    prompt = prompt_for_user(request.user, pk)
    membership = membership_for_user(request.user, prompt.workspace_id)
    versions = prompt_versions(prompt)
    by_number = {v.number: v for v in versions}
    last = versions[-1].number
    b = by_number.get(_number(request.GET.get("b"), last)) or versions[-1]
    a = by_number.get(_number(request.GET.get("a"), max(1, b.number - 1))) or versions[0]
    changes = messages_diff(a.messages, b.messages)
    edited = [change.diff for change in changes if change.op != EQUAL]
    return render(
        request,
        "compare/prompts/detail.html",
        {
            "workspace": prompt.workspace,
            "can_edit": membership.allows(Role.EDITOR),
            "prompt": prompt,
            "versions": versions,
            "a": a,
            "b": b,
            "message_diff": changes,
            "b_messages_json": json.dumps(b.messages, indent=2, ensure_ascii=False),
            "diff_summary": {
                "changed": bool(edited),
                "messages": len(edited),
                "inserted_words": sum(diff.inserted_words for diff in edited),
                "deleted_words": sum(diff.deleted_words for diff in edited),
            },
            "system_diff": side_by_side(a.system_prompt, b.system_prompt),
        },
    )


@login_required
@require_POST
def version_add(request, pk):
    prompt = prompt_for_user(request.user, pk, write=True)
    parent = prompt.versions.filter(number=_number(request.POST.get("parent"), 0)).first()
    try:
        version = services.prompt_version_create(
            prompt=prompt,
            user=request.user,
            text=request.POST.get("text", ""),
            messages=_posted_messages(request.POST.get("messages")),
            system_prompt=request.POST.get("system_prompt", ""),
            message=request.POST.get("message", ""),
            parent=parent or prompt.current,
        )
        messages.success(request, f"Saved version {version.number}.")
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    return redirect("compare:prompt", prompt.pk)


def _posted_messages(raw: str | None) -> list | None:
    """The new-version form's JSON message list (shown for a version of several messages); None when not sent."""
    if raw is None:
        return None
    try:
        return json.loads(raw)
    except ValueError as exc:
        raise ValidationError({"messages": f"Messages: not valid JSON ({exc})."}) from None


@login_required
@require_POST
def version_promote(request, pk):
    version = prompt_version_for_user(request.user, pk, write=True)
    services.prompt_promote(version=version)
    messages.success(request, f"Version {version.number} is now current.")
    return redirect("compare:prompt", version.prompt_id)


@login_required
@require_POST
def variant_save_page(request, pk):
    """The comparison page's "save to library": a variant's prompt as a new version of a prompt, or a new prompt."""
    variant = variant_for_user(request.user, _number(request.POST.get("variant"), 0), write=True)
    if variant.group_id != int(pk):
        raise Http404("No such variant in this comparison.")
    prompt_id = _number(request.POST.get("prompt"), 0)
    prompt = prompt_for_user(request.user, prompt_id, write=True) if prompt_id else None
    try:
        version = services.variant_save_as_version(
            variant=variant,
            user=request.user,
            prompt=prompt,
            name=request.POST.get("name", ""),
            message=request.POST.get("message", ""),
        )
        messages.success(request, f"Saved {variant.label}'s prompt as {version.name}.")
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    return redirect("compare:detail", variant.group_id)


@login_required
@require_safe
def answer_diff(request, pk, number):
    """Two answers of a round side by side, what differs marked (the comparison page's "highlight differences")."""
    group = group_for_user(request.user, pk)
    round_ = page_selectors.group_round(group, number)
    outputs = {o.pk: o for o in round_.outputs.all()}
    left, right = (_number(request.GET.get(side), 0) for side in ("a", "b"))
    if left not in outputs or right not in outputs:
        raise Http404("No such answers in this round.")
    diff = side_by_side(outputs[left].text, outputs[right].text)
    return render(request, "compare/prompts/_answer_diff.html", {"diff": diff})
