"""Picking a library version for a variant: the one rule for what `prompt_version` in a variant's fields means.

A variant names a version by id (or carries the instance, as a clone does): the version must be of the same
workspace, and its messages fill a variant that has neither a prompt nor messages. The variant keeps the version as
its origin even when its prompt is edited afterwards; whether it still *runs* that version is
`selectors.runs_version`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from lab.models import Workspace

from .models import PromptVersion


class Errors(Protocol):
    def add(self, field: str, message: str) -> None: ...


def picked_versions(errors: Errors, workspace: Workspace, variants: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """The variants with `prompt_version` as a PromptVersion of `workspace` (or None); a foreign or unknown id is
    an error on `variants` naming the variant."""
    wanted = {_id(v.get("prompt_version")) for v in variants} - {None}
    found = {
        version.pk: version
        for version in PromptVersion.objects.filter(pk__in=wanted, prompt__workspace=workspace).select_related("prompt")
    }
    picked = []
    for position, variant in enumerate(variants, start=1):
        version_id = _id(variant.get("prompt_version"))
        version = found.get(version_id) if version_id is not None else None
        if version_id is not None and version is None:
            errors.add("variants", f"Variant {position}: prompt_version: no such prompt version in this workspace.")
        filled = {**variant, "prompt_version": version}
        if version is not None and not (variant.get("prompt") or "").strip() and not variant.get("messages"):
            filled["prompt"], filled["messages"] = version.text, version.messages
        picked.append(filled)
    return picked


def _id(value: Any) -> int | None:
    if isinstance(value, PromptVersion):
        return value.pk
    if isinstance(value, bool) or value in (None, ""):
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        return -1  # never an id: reported as unknown
