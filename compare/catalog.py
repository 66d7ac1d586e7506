"""How comparisons find their models: lab's catalog, plus the rule that a simulated model must be a preset.

Group creation, the editor page and the worker all ask here, so "does this model exist" has one answer.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError

from lab.catalog import cached_model_info, model_info_for, split_model_id
from lab.models import Connection, ConnectionKind, Workspace
from lab.providers.base import ModelInfo
from lab.providers.message_rules import Target
from lab.providers.simulated import parse_model


def resolve_model(
    workspace: Workspace, model_id: str, *, connections: dict[str, Connection] | None = None
) -> tuple[Connection, ModelInfo | None]:
    """The connection (it must exist in the workspace) and the catalog entry when the catalog lists the model.

    A provider's catalog may lag, so an unlisted model still runs; the simulated catalog is exact. `connections`:
    see `model_info_for`.
    """
    connection, info = model_info_for(workspace, model_id, connections=connections)
    if connection.kind == ConnectionKind.SIMULATED:
        try:
            parse_model(split_model_id(model_id)[1])
        except ValueError as exc:
            raise ValidationError(str(exc)) from None
    return connection, info


def message_target(kind: str, model_id: str, info: ModelInfo | None, params: dict[str, Any]) -> Target:
    """Where a variant's conversation goes, for the message rules: its connection kind, model and known context."""
    return Target(
        kind=kind,
        model=model_id,
        context_length=info.context_length if info else None,
        max_tokens=params.get("max_tokens"),
    )


def cached_targets(workspace: Workspace, models: dict[int, str], params: dict[int, dict]) -> dict[int, Target]:
    """`models` (position → model id) as targets, from the connections and their cached catalogs only (no fetch:
    a round starts inside a transaction); a model whose connection is gone has none (the worker names it)."""
    names = {split_model_id(model_id)[0] for model_id in models.values() if "::" in model_id}
    connections = {c.name: c for c in Connection.objects.filter(workspace=workspace, name__in=names)}
    targets = {}
    for position, model_id in models.items():
        if "::" not in model_id or (connection := connections.get(split_model_id(model_id)[0])) is None:
            continue
        info = cached_model_info(connection, split_model_id(model_id)[1])
        targets[position] = message_target(connection.kind, model_id, info, params[position])
    return targets
