"""Reads of workspace files: which of the files variables name belong to a workspace."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .models import WorkspaceFile
from .references import file_id_of, looks_like_reference


def reference_problems(variables: Mapping[str, Any], *, workspace_id: int) -> dict[str, str]:
    """Per variable, why its file reference cannot be used here: malformed, or not a file of this workspace (another
    workspace's file and a missing one are told alike)."""
    return references_problems([variables], workspace_id=workspace_id)[0]


def references_problems(many: Sequence[Mapping[str, Any]], *, workspace_id: int) -> list[dict[str, str]]:
    """`reference_problems` of each mapping (a run's rounds), with one query for all."""
    wanted = {file_id_of(value) for variables in many for value in variables.values()} - {None}
    found = set(WorkspaceFile.objects.filter(workspace_id=workspace_id, pk__in=wanted).values_list("pk", flat=True))
    return [_problems(variables, found) for variables in many]


def _problems(variables: Mapping[str, Any], found: set[int]) -> dict[str, str]:
    problems: dict[str, str] = {}
    for name, value in variables.items():
        if not looks_like_reference(value):
            continue
        file_id = file_id_of(value)
        if file_id is None:
            problems[name] = 'a file reference is {"$file": <file id>}, with nothing else.'
        elif file_id not in found:
            problems[name] = f"file {file_id} is not a file of this workspace."
    return problems
