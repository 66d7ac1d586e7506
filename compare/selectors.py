"""Reads for comparisons: the groups list with its filters, a round with its outputs, blind-mode reveal, datasets."""

from __future__ import annotations

import random
from collections.abc import Callable

from django.db.models import Count, Prefetch, Q, QuerySet

from lab.access import workspaces_of
from lab.templating import RenderedGroup, render_variants

from .models import CompareGroup, Dataset, Output, Round, RoundStatus

# Apps further up (voting) register "has this user voted in this round?" here; compare cannot import them.
RevealCheck = Callable[[Round, object], bool]
_reveal_checks: list[RevealCheck] = []


def register_reveal_check(check: RevealCheck) -> None:
    """Blind mode shows labels and models once any registered check says the user may see them."""
    if check not in _reveal_checks:
        _reveal_checks.append(check)


def labels_visible(round_: Round, user, *, blind: bool = False) -> bool:
    """In blind mode labels stay hidden until the user has voted (until voting exists, they stay hidden). Blind
    mode is the comparison's setting, or a page's own (`blind`: the voting inbox is blind by default)."""
    return not (round_.group.blind or blind) or any(check(round_, user) for check in _reveal_checks)


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
    return render_variants(system_prompt=group.system_prompt, variables=group.shared_variables, variants=templates)


def group_recent_rounds(group: CompareGroup, limit: int = 100) -> list[Round]:
    return list(group.rounds.order_by("-number")[:limit])


def round_with_outputs(round_: Round) -> Round:
    outputs = Output.objects.select_related("variant").order_by("variant__position")
    return (
        Round.objects.select_related("group__workspace", "dataset_row")
        .prefetch_related(Prefetch("outputs", queryset=outputs))
        .get(pk=round_.pk)
    )


def outputs_as_seen_by(round_: Round, user, *, blind: bool = False) -> tuple[list[Output], bool]:
    """The round's outputs in the order and with the names this user may see, and whether labels are shown.

    Hidden labels come with a per-user shuffle, so column order gives nothing away either; `blind` as in
    labels_visible.
    """
    outputs = list(round_.outputs.all())
    visible = labels_visible(round_, user, blind=blind)
    if visible:
        for output in outputs:
            output.display_label = output.variant.label
        return outputs, True
    outputs = blind_order(round_.pk, getattr(user, "pk", 0), outputs)
    for index, output in enumerate(outputs):
        output.display_label = f"Answer {chr(ord('A') + index % 26)}"
    return outputs, False


def blind_order(round_id: int, user_id: int, outputs: list) -> list:
    """Blind mode's per-user shuffle of a round's outputs (given in variant position order): the columns as this
    user sees them before voting. Voter quality reads it back to know which column a blind pick was in."""
    shuffled = list(outputs)
    random.Random(f"{round_id}:{user_id}").shuffle(shuffled)
    return shuffled


def round_stopped(*, round_id: int) -> bool:
    """True once a running round was cancelled or failed: the worker stops streaming."""
    return not Round.objects.filter(pk=round_id, status=RoundStatus.RUNNING).exists()


def group_settings(group: CompareGroup) -> dict:
    """A group's settings and variants in the shape `group_create` takes: what a clone starts from."""
    return {
        "title": f"{group.title} (copy)",
        "mode": group.mode,
        "system_prompt": group.system_prompt,
        "shared_variables": group.shared_variables,
        "params": group.params,
        "blind": group.blind,
        "stagger_ms": group.stagger_ms,
        "timeout_ms": group.timeout_ms,
        "timeout_step_ms": group.timeout_step_ms,
        "variants": [
            {
                "label": v.label,
                "model": v.model,
                "prompt": v.prompt,
                "variables": v.variables,
                "params": v.params,
                "prompt_version": v.prompt_version_id,  # a clone or duplicate keeps the lineage
            }
            for v in group.variants.all()
        ],
    }
