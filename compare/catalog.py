"""How comparisons find their models: lab's catalog, plus the rule that a simulated model must be a preset.

Group creation, the editor page and the worker all ask here, so "does this model exist" has one answer.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError

from lab.catalog import model_info_for, split_model_id
from lab.models import Connection, ConnectionKind, Workspace
from lab.providers.base import ModelInfo
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
