"""Reads for comparisons: the groups list with its filters, a round with its outputs, datasets (blind mode: `blind`)."""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Prefetch, Q, QuerySet

from lab.access import workspaces_of
from lab.stats.intervals import wilson_interval
from lab.templating import RenderedGroup, render_variants

from .models import CompareGroup, Dataset, Output, Round, RoundStatus


def groups_for_user(user, *, workspace: int | None = None, q: str = "", model: str = "") -> QuerySet[CompareGroup]:
    """The caller's groups, newest first, optionally in one workspace, matching text, or using a model."""
    groups = CompareGroup.objects.filter(workspace__in=workspaces_of(user))
    if workspace is not None:
        groups = groups.filter(workspace_id=workspace)
    if q:
        groups = groups.filter(Q(title__icontains=q) | Q(system_prompt__icontains=q) | Q(variants__prompt__icontains=q))
    if model:
        groups = groups.filter(variants__model=model)
    if q or model:
        groups = groups.distinct()
    # Meta.ordering does not apply to a GROUP BY query, so the order is spelled out.
    groups = groups.annotate(round_count=Count("rounds", distinct=True)).order_by("-created_at", "-id")
    return groups.prefetch_related("variants")


def datasets_for_user(user, *, workspace: int | None = None) -> QuerySet[Dataset]:
    """The caller's datasets with their row counts, newest first, optionally in one workspace."""
    datasets = Dataset.objects.filter(workspace__in=workspaces_of(user))
    if workspace is not None:
        datasets = datasets.filter(workspace_id=workspace)
    return datasets.annotate(row_count=Count("rows")).order_by("-created_at", "-id")


def dataset_with_rows(dataset: Dataset) -> Dataset:
    return Dataset.objects.annotate(row_count=Count("rows")).prefetch_related("rows").get(pk=dataset.pk)


def group_rendering(group: CompareGroup) -> RenderedGroup:
    """The group's prompts rendered with its shared variables: the warnings shown with the group."""
    templates = [variant.template() for variant in group.variants.all()]
    return render_variants(
        system_prompt=group.system_prompt,
        variables=group.shared_variables,
        variants=templates,
        shared_messages=group.shared_messages,
    )


def group_recent_rounds(group: CompareGroup, limit: int = 100) -> list[Round]:
    return list(group.rounds.order_by("-number")[:limit])


def round_with_outputs(round_: Round) -> Round:
    outputs = Output.objects.select_related("variant").order_by("variant__position")
    return (
        Round.objects.select_related("group__workspace", "dataset_row")
        .prefetch_related(Prefetch("outputs", queryset=outputs))
        .get(pk=round_.pk)
    )


def round_stopped(*, round_id: int) -> bool:
    """True once a running round was cancelled or failed: the worker stops streaming."""
    return not Round.objects.filter(pk=round_id, status=RoundStatus.RUNNING).exists()


def group_settings(group: CompareGroup) -> dict:
    """A group's settings and variants in the shape `group_create` takes: what a clone starts from."""
    return {
        "title": f"{group.title} (copy)",
        "mode": group.mode,
        "system_prompt": group.system_prompt,
        "shared_messages": group.shared_messages,
        "shared_variables": group.shared_variables,
        "params": group.params,
        "assertions": group.assertions,
        "blind": group.blind,
        "stagger_ms": group.stagger_ms,
        "timeout_ms": group.timeout_ms,
        "tools": group.tools,
        "tool_choice": group.tool_choice,
        "response_schema": group.response_schema,
        "variants": [
            {
                "label": v.label,
                "model": v.model,
                "prompt": v.prompt,
                "messages": v.messages,
                "variables": v.variables,
                "params": v.params,
                "tools": v.tools,
                "tool_choice": v.tool_choice,
                "response_schema": v.response_schema,
                "prompt_version": v.prompt_version_id,  # a clone or duplicate keeps the lineage
            }
            for v in group.variants.all()
        ],
    }


@dataclass(frozen=True)
class ValidShare:
    """How many of a variant's answers matched the response schema, with the share's Wilson 95% interval."""

    position: int
    label: str
    model: str
    valid: int
    checked: int
    share: float
    low: float
    high: float


def schema_validity(group: CompareGroup) -> list[ValidShare]:
    """Per variant with a checked answer: the answers valid against the response schema, out of those checked
    (`Output.schema_valid` set; docs/tools.md), in one query."""
    counts = (
        Output.objects.filter(round__group=group, schema_valid__isnull=False)
        .values("variant__position", "variant__label", "variant__model")
        .annotate(valid=Count("pk", filter=Q(schema_valid=True)), checked=Count("pk"))
        .order_by("variant__position")
    )
    return [
        ValidShare(
            row["variant__position"],
            row["variant__label"],
            row["variant__model"],
            row["valid"],
            row["checked"],
            row["valid"] / row["checked"],
            *wilson_interval(row["valid"], row["checked"]),
        )
        for row in counts
    ]
