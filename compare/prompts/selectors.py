"""Reads for the prompt library: a workspace's prompts, a prompt's versions, and which variants ran a version."""

from __future__ import annotations

from collections.abc import Iterable

from django.db.models import Count, F, QuerySet

from lab.models import Workspace

from ..models import Variant
from .models import Prompt, PromptVersion


def workspace_prompts(workspace: Workspace) -> QuerySet[Prompt]:
    """The library of a workspace by name, each with its number of versions and its current version."""
    return (
        Prompt.objects.filter(workspace=workspace)
        .select_related("current")
        .annotate(version_count=Count("versions"))
        .order_by("name", "id")
    )


def prompt_versions(prompt: Prompt) -> list[PromptVersion]:
    """Versions in number order, each with its parent (and the parent's prompt, for lineage across prompts)."""
    return list(prompt.versions.select_related("parent__prompt").order_by("number"))


def version_variants(versions: Iterable[PromptVersion | int]) -> QuerySet[Variant]:
    """The variants that ran one of these versions: made from it, with its messages and system prompt unchanged.

    A variant cloned from a version and then edited keeps the version as its origin (lineage) but ran something
    else, so its votes and scores are not the version's.
    """
    ids = [v.pk if isinstance(v, PromptVersion) else v for v in versions]
    return Variant.objects.filter(
        prompt_version__in=ids,
        prompt=F("prompt_version__text"),
        messages=F("prompt_version__messages"),
        group__system_prompt=F("prompt_version__system_prompt"),
    )


def runs_version(variant: Variant) -> bool:
    """Whether this variant ran its origin version as it is (the same rule as `version_variants`)."""
    version = variant.prompt_version
    return (
        version is not None
        and variant.prompt == version.text
        and variant.messages == version.messages
        and variant.group.system_prompt == version.system_prompt
    )


EDITOR_VERSIONS = 500  # the newest versions offered in the editor's picker


def editor_versions(workspace: Workspace) -> list[dict]:
    """The versions the editor offers for a variant, by prompt name and newest first, named as the picker shows them."""
    versions = (
        PromptVersion.objects.filter(prompt__workspace=workspace)
        .select_related("prompt")
        .order_by("prompt__name", "-number")[:EDITOR_VERSIONS]
    )
    return [
        {
            "id": v.pk,
            "name": f"{v.prompt.name} v{v.number}{' (current)' if v.prompt.current_id == v.pk else ''}",
            "text": v.text,
            "messages": v.messages,
        }
        for v in versions
    ]
