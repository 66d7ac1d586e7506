"""Writes for comparisons: create and clone groups, reveal and delete them (datasets: `datasets/`).

Every rule a comparison obeys lives here. Errors are Django ValidationErrors keyed by field, and a message
about one variant names it ("Variant 2 (Concise): …"), so the API turns them into 400s a person can act on.
Starting and cancelling a round is `rounds/start.py`; the worker's side (claim, record, finish) `rounds/worker.py`.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial
from typing import Any

from django.conf import settings
from django.core.exceptions import PermissionDenied, ValidationError
from django.db import transaction
from django.utils import timezone

from lab.access import membership_for_user
from lab.audit.models import Action
from lab.audit.services import audit_record
from lab.events import RESYNC, resync
from lab.files.selectors import reference_problems
from lab.models import Role, Workspace
from lab.providers.base import PARAMETERS
from lab.providers.known_models import takes_response_schema
from lab.providers.params import check_params, set_params
from lab.providers.tools import response_schema_errors, sent_schema, tools_errors
from lab.realtime import broadcast, group_channel
from lab.templating import VariantTemplate, message_problem, render_variants, variant_name

from .assertions.services import FIELD as ASSERTIONS_FIELD
from .assertions.services import assertions_parse
from .blind import may_reveal
from .catalog import message_target, resolve_model
from .field_errors import FieldErrors
from .messages import last_user_text
from .models import (
    DEFAULT_STAGGER_MS,
    DEFAULT_TIMEOUT_MS,
    MAX_EXPERIMENT_VARIANTS,
    MAX_VARIANTS,
    CompareGroup,
    Dataset,
    Mode,
    Variant,
    placeholder_label,
)
from .prompts.picking import picked_versions
from .rounds.start import row_errors
from .selectors import group_settings

MAX_STAGGER_MS = 5_000
# A round must end well inside the worker's soft time limit, which is the last line of defence.
TIME_LIMIT_MARGIN_S = 30


def variant_templates(variants: Sequence[dict[str, Any]]) -> list[VariantTemplate]:
    """Variants as the templating module sees them, numbered from 1 with default labels A, B, C …

    A variant gives `messages` ([{role, content}]) or `prompt` (the shorthand for one user message); with both
    (a clone's settings carry both), its messages count and its prompt is their last user message.
    """
    templates = []
    for index, variant in enumerate(variants, start=1):
        messages = variant.get("messages") or ()
        messages = [dict(m) for m in messages] if isinstance(messages, list | tuple) else ()
        templates.append(
            VariantTemplate(
                position=index,
                label=_label(variant, index),
                prompt=last_user_text(messages) if messages else variant.get("prompt") or "",
                variables=variant.get("variables") or {},
                messages=messages,
            )
        )
    return templates


def _label(variant: dict[str, Any], position: int) -> str:
    label = (variant.get("label") or "").strip()
    return label or placeholder_label(position)


def group_create(
    *,
    workspace: Workspace,
    user,
    mode: str,
    variants: Sequence[dict[str, Any]],
    title: str = "",
    system_prompt: str = "",
    shared_messages: Sequence[dict[str, Any]] = (),
    shared_variables: dict[str, Any] | None = None,
    params: dict[str, Any] | None = None,
    blind: bool = False,
    stagger_ms: int = DEFAULT_STAGGER_MS,
    timeout_ms: int = DEFAULT_TIMEOUT_MS,
    dataset: Dataset | None = None,
    cloned_from: CompareGroup | None = None,
    tools: Sequence[dict[str, Any]] | None = None,
    tool_choice: str = "",
    response_schema: dict[str, Any] | None = None,
    assertions: Any = None,
    rows_checked: bool = False,
) -> CompareGroup:
    """A comparison with its variants; each variant is a dict of label, model, prompt or messages, variables (and
    params). `shared_messages` ([{role, content}]) go to every variant after the system prompt (few-shot turns);
    `assertions` are the promptfoo-style checks every answer is graded against (compare/assertions/).
    `rows_checked`: the caller has checked that every row of `dataset` gives each placeholder a value (an
    experiment's plan) and renders every row when the rounds start (round_start, rows_check), so the rows are not
    rendered here too (40 ms at 1,000 rows before the command's first call)."""
    errors = FieldErrors()
    try:
        assertions = assertions_parse(assertions or [], workspace=workspace)
    except ValidationError as error:
        for message in error.message_dict[ASSERTIONS_FIELD]:
            errors.add(ASSERTIONS_FIELD, message)
    _check_unknown_params(errors, "params", params or {})
    shared_variables, params = dict(shared_variables or {}), set_params(params or {})
    if mode not in Mode.values:
        errors.add("mode", f"Mode must be one of: {', '.join(Mode.values)}.")
    _check_count(errors, mode, variants)
    _check_timing(errors, stagger_ms, timeout_ms, len(variants))
    if dataset is not None and dataset.workspace_id != workspace.pk:
        errors.add("dataset", "No such dataset in this workspace.")
    variants = picked_versions(errors, workspace, variants)
    shapes_before = sum(map(len, errors.by_field.values()))
    shared_messages = _checked_messages(errors, shared_messages, variants)
    well_formed = sum(map(len, errors.by_field.values())) == shapes_before
    templates = variant_templates(variants)
    _check_variants(errors, workspace, user, mode, variants, templates, params)
    if well_formed:  # a malformed message would be named again by every variant's rendering
        _check_templates(
            errors, system_prompt, shared_messages, shared_variables, templates, dataset, each_row=not rows_checked
        )
    check_file_references(errors, workspace.pk, shared_variables, templates)
    check_tool_settings(errors, variants, list(tools or []), tool_choice or "", response_schema)
    errors.raise_if_any()

    # Checked before the transaction opens: checking a model may read its provider's catalog over HTTP the first
    # time a connection is used, which must not hold a transaction open.
    with transaction.atomic():
        group = CompareGroup.objects.create(
            workspace=workspace,
            created_by=user,
            title=(title or "").strip() or "Untitled comparison",
            mode=mode,
            system_prompt=system_prompt or "",
            shared_messages=shared_messages,
            shared_variables=shared_variables,
            params=params,
            assertions=assertions,
            blind=blind,
            stagger_ms=stagger_ms,
            timeout_ms=timeout_ms,
            dataset=dataset,
            cloned_from=cloned_from,
            tools=list(tools or []),
            tool_choice=tool_choice or "",
            response_schema=response_schema or None,
        )
        Variant.objects.bulk_create(
            Variant(
                group=group,
                position=template.position,
                label=template.label,
                model=variant["model"].strip(),
                prompt=template.prompt,
                messages=[{"role": m["role"], "content": m["content"]} for m in template.own_messages()],
                variables=dict(template.variables),
                params=set_params(variant.get("params") or {}),
                tools=variant.get("tools"),
                tool_choice=variant.get("tool_choice"),
                response_schema=variant.get("response_schema"),
                prompt_version=variant.get("prompt_version"),
            )
            for variant, template in zip(variants, templates, strict=True)
        )
    return group


def check_tool_settings(
    errors: FieldErrors, variants: Sequence[dict], tools: list, tool_choice: str, response_schema: Any
) -> None:
    """Tools, tool choice and response schema of the group and of each variant overriding them (docs/tools.md):
    each problem names the tool; a model known not to take a native response schema is refused, naming it."""
    for problem in tools_errors(tools, tool_choice):
        errors.add("tools" if "tool_choice" not in problem else "tool_choice", problem)
    for problem in response_schema_errors(response_schema):
        errors.add("response_schema", problem)
    for position, variant in enumerate(variants, start=1):
        name = variant_name(position, _label(variant, position))
        own_tools, own_choice = variant.get("tools"), variant.get("tool_choice")
        if own_tools is not None or own_choice is not None:
            checked = tools if own_tools is None else own_tools
            choice = (tool_choice if own_choice is None else own_choice) if checked else own_choice
            for problem in tools_errors(checked, choice):
                errors.add("variants", f"{name}: {problem}")
        own_schema = variant.get("response_schema")
        for problem in response_schema_errors(own_schema):
            errors.add("variants", f"{name}: {problem}")
        schema = response_schema if own_schema is None else own_schema
        model = str(variant.get("model") or "")
        if sent_schema(schema) is not None and takes_response_schema(model.rpartition("::")[2]) is False:
            errors.add(
                "variants",
                f"{name}: {model} does not take a native response schema (the model catalog says so); pick "
                'another model or set response_schema mode "validate" to only check the answers.',
            )


def _checked_messages(errors: FieldErrors, shared: Any, variants: Sequence[dict]) -> list[dict]:
    """The shared messages as stored; a message that is not {role, content} (shared or a variant's) is named by
    its index and variant."""
    if not isinstance(shared, list | tuple):
        errors.add("shared_messages", "Give a list of messages, each {role, content}.")
        shared = []
    for index, message in enumerate(shared, start=1):
        if problem := message_problem(message):
            errors.add("shared_messages", f"Shared message {index}: {problem}")
    for position, variant in enumerate(variants, start=1):
        messages = variant.get("messages")
        if messages in (None, [], ()):
            continue
        name = variant_name(position, _label(variant, position))
        if not isinstance(messages, list | tuple):
            errors.add("variants", f"{name}: messages: give a list of messages, each {{role, content}}.")
            continue
        for index, message in enumerate(messages, start=1):
            if problem := message_problem(message):
                errors.add("variants", f"{name}: message {index}: {problem}")
    return [{"role": m["role"], "content": m["content"]} for m in shared if isinstance(m, dict) and "role" in m]


def _check_count(errors: FieldErrors, mode: str, variants: Sequence[dict]) -> None:
    if mode == Mode.CUSTOM:
        if not 1 <= len(variants) <= MAX_EXPERIMENT_VARIANTS:
            errors.add(
                "variants", f"An experiment has 1 to {MAX_EXPERIMENT_VARIANTS} variants; this has {len(variants)}."
            )
    elif not 2 <= len(variants) <= MAX_VARIANTS:
        errors.add("variants", f"A comparison has 2 to {MAX_VARIANTS} variants; this has {len(variants)}.")


def _check_timing(errors: FieldErrors, stagger_ms: int, timeout_ms: int, count: int) -> None:
    if not 0 <= stagger_ms <= MAX_STAGGER_MS:
        errors.add("stagger_ms", f"Stagger starts by 0 to {MAX_STAGGER_MS} ms.")
    if timeout_ms < 100:
        errors.add("timeout_ms", "A timeout is at least 100 ms.")
        return
    probe = CompareGroup(stagger_ms=max(stagger_ms, 0), timeout_ms=timeout_ms)
    budget_s = settings.CELERY_TASK_SOFT_TIME_LIMIT - TIME_LIMIT_MARGIN_S
    if probe.longest_run(count).total_seconds() > budget_s:
        errors.add(
            "timeout_ms",
            f"With this timeout and stagger the last variant could run {probe.longest_run(count).total_seconds():g} s; "
            f"a round must end within {budget_s} s.",
        )


def _check_unknown_params(errors: FieldErrors, field: str, params: dict[str, Any], who: str = "") -> None:
    unknown = sorted(set(params) - set(PARAMETERS))
    if unknown:
        errors.add(field, f"{who}unknown parameters {', '.join(unknown)}; known: {', '.join(PARAMETERS)}.")


def _check_variants(
    errors: FieldErrors,
    workspace: Workspace,
    user,
    mode: str,
    variants: Sequence[dict],
    templates: list[VariantTemplate],
    params: dict[str, Any],
) -> None:
    labels: dict[str, int] = {}
    for variant, template in zip(variants, templates, strict=True):
        name = variant_name(template.position, template.label)
        if template.label in labels:
            errors.add("variants", f"{name}: label: variant {labels[template.label]} already uses this label.")
        labels.setdefault(template.label, template.position)
        if not template.messages and not template.prompt.strip():
            errors.add("variants", f"{name}: prompt: write a prompt.")
        _check_unknown_params(errors, "variants", variant.get("params") or {}, f"{name}: params: ")
        variant_params = set_params(variant.get("params") or {})
        if variant_params and mode != Mode.CUSTOM:
            errors.add("variants", f"{name}: params: per-variant parameters are for custom mode; set them for all.")
        try:
            connection, info = resolve_model(workspace, (variant.get("model") or "").strip())
        except ValidationError as exc:
            errors.add("variants", f"{name}: model: {' '.join(exc.messages)}")
            continue
        if connection.owner_id is not None and connection.owner_id != getattr(user, "pk", None):
            # A person's own key (lab.connection_env) runs only what that person starts.
            errors.add("variants", f"{name}: model: the connection {connection.name} is private to another member.")
            continue
        model_id = variant["model"].strip()
        template.target = message_target(connection.kind, model_id, info, {**params, **variant_params})
        kinds = {model_id: connection.kind}
        for problem in check_params({**params, **variant_params}, [(model_id, info)], kinds=kinds):
            errors.add("params", f"{name}: {problem}.")
    _check_mode(errors, mode, variants, templates)


def _check_mode(errors: FieldErrors, mode: str, variants: Sequence[dict], templates: list[VariantTemplate]) -> None:
    if not variants or mode == Mode.CUSTOM:
        return
    first, first_template = variants[0], templates[0]
    for variant, template in zip(variants[1:], templates[1:], strict=True):
        name = variant_name(template.position, template.label)
        if mode == Mode.PROMPTS and (variant.get("model") or "").strip() != (first.get("model") or "").strip():
            errors.add(
                "variants",
                f"{name}: model: a prompts comparison runs every variant on one model "
                f"({first.get('model')}); compare models in models mode or use custom mode.",
            )
        if mode == Mode.MODELS and template.own_messages() != first_template.own_messages():
            errors.add(
                "variants",
                f"{name}: prompt: a models comparison sends every model the same prompt as variant 1; "
                "compare prompts in prompts mode or use custom mode.",
            )
    if mode == Mode.MODELS:
        for template in templates:
            if template.variables:
                errors.add(
                    "variants",
                    f"{variant_name(template.position, template.label)}: variables: a models comparison "
                    "sends every model the same prompt; move these to the shared variables.",
                )


def check_file_references(
    errors: FieldErrors,
    workspace_id: int,
    shared_variables: dict[str, Any],
    templates: list[VariantTemplate],
    *,
    field: str = "shared_variables",
    where: str = "",
) -> None:
    """Every variable holding a file (`{"$file": id}`) names a file of this workspace; each one that does not is
    named (another workspace's file is told like a missing one)."""
    for name, problem in reference_problems(shared_variables, workspace_id=workspace_id).items():
        errors.add(field, f"{where}{name}: {problem}")
    for template in templates:
        for name, problem in reference_problems(template.variables, workspace_id=workspace_id).items():
            errors.add("variants", f"{variant_name(template.position, template.label)}: variables: {name}: {problem}")


def _check_templates(
    errors: FieldErrors,
    system_prompt: str,
    shared_messages: list[dict],
    shared_variables: dict[str, Any],
    templates: list[VariantTemplate],
    dataset: Dataset | None,
    *,
    each_row: bool = True,
) -> None:
    # A variable that neither the shared variables nor any dataset row gives is missing from the comparison; one
    # that some rows lack is named by row, as a run over the dataset names it (round_start), before anything is saved.
    rows = list(dataset.rows.order_by("position")) if dataset is not None else []
    from_rows = {name: "" for row in rows for name in row.vars}
    rendered = render_variants(
        system_prompt=system_prompt or "",
        variables={**from_rows, **shared_variables},
        variants=templates,
        shared_messages=shared_messages,
    )
    for message in rendered.errors:
        errors.add("variants", message)
    if rows and each_row and not rendered.errors:
        snapshots = [{**shared_variables, **row.vars} for row in rows]
        row_errors(errors, system_prompt or "", templates, rows, snapshots, shared_messages=shared_messages)


def group_clone(*, group: CompareGroup, user, copy_variant: int | None = None, **overrides: Any) -> CompareGroup:
    """A new group with this one's settings and variants, changed by `overrides` (any group_create field).

    `copy_variant` appends a copy of that variant (by position) to start its next version.
    """
    settings_now = group_settings(group)
    variants = settings_now["variants"]
    fields = {
        **settings_now,
        "dataset": group.dataset,
        **{key: value for key, value in overrides.items() if value is not None},
    }
    if copy_variant is not None:
        if not 1 <= copy_variant <= len(variants):
            raise ValidationError({"copy_variant": f"This group has variants 1 to {len(variants)}."})
        source = variants[copy_variant - 1]
        fields["variants"] = [*fields["variants"], {**source, "label": f"{source['label']} v2"}]
    return group_create(workspace=group.workspace, user=user, cloned_from=group, **fields)


@transaction.atomic
def group_reveal(*, group: CompareGroup, user) -> CompareGroup:
    """End a blind comparison's blind voting for everyone (compare.blind): every round's names, figures and tallies
    show to all, and its prompts may go to the library. Revealing twice changes nothing."""
    if not group.blind:
        raise ValidationError({"blind": "This comparison is not blind; there is nothing to reveal."})
    if group.revealed_at is not None:
        return group
    if not may_reveal(group, user):
        raise PermissionDenied("Only the comparison's creator or an owner of the workspace may reveal it.")
    group.revealed_at = timezone.now()
    group.save(update_fields=["revealed_at", "updated_at"])
    audit_record(actor=user, action=Action.COMPARISON_REVEALED, target=group)
    # Open pages reload their round over HTTP, now with names and figures.
    transaction.on_commit(partial(broadcast, group_channel(group.pk), RESYNC, **resync()))
    return group


@transaction.atomic
def group_delete(*, group: CompareGroup, user) -> None:
    """Delete a comparison with its rounds, answers, votes and verdicts: its creator or an owner may, once no
    round of it is still queued or running (a worker would be writing into it)."""
    if group.created_by_id != user.pk and not membership_for_user(user, group.workspace_id).allows(Role.OWNER):
        raise PermissionDenied("Only the comparison's creator or an owner of the workspace may delete it.")
    if group.rounds.unfinished().exists():
        raise ValidationError({"rounds": "A round of this comparison is still running; cancel it first."})
    details = {"variants": group.variants.count(), "rounds": group.rounds.count()}
    audit_record(actor=user, action=Action.COMPARISON_DELETED, target=group, details=details)
    group.delete()
