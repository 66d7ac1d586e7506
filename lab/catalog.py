"""The model catalog: each connection's models, fetched from its provider, cached, listed per workspace.

A connection's catalog is fetched the first time anyone needs it and again whenever someone presses
"Refresh models"; between those it is read from `Connection.models_cache`. A catalog that could not be fetched is
tried again by a use at most once a minute (FAILED_CATALOG_RETRY_S), not by every round's claim. These functions
are sync (ORM); async code calls them through `sync_to_async`.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging

import httpx
from asgiref.sync import async_to_sync
from django.core.cache import cache
from django.core.exceptions import ValidationError
from django.utils import timezone

from .crypto import SecretDecryptionError
from .models import Connection, ConnectionKind, Workspace
from .outages import REDIS_DOWN
from .providers.base import ConnectionConfig, ModelInfo, ProviderError
from .providers.http import RetryPolicy, tls_context
from .providers.registry import get_adapter

logger = logging.getLogger(__name__)

# A person is usually waiting on a page: one quick retry, and a provider that does not answer in 15 s fails.
CATALOG_RETRY = RetryPolicy(retries=1, base_delay=0.5, max_retry_after=5.0)
CATALOG_TIMEOUT = httpx.Timeout(15.0, connect=5.0)
# A catalog that could not be fetched is tried again on first use at most this often: every round's claim asked
# for it, and waited for its failure (a retry, up to the timeout) before its first call.
FAILED_CATALOG_RETRY_S = 60


def split_model_id(model_id: str) -> tuple[str, str]:
    """`openai::gpt-4.1-mini` → ("openai", "gpt-4.1-mini"); the model part may itself contain `::` or `/`."""
    connection_name, sep, model = (model_id or "").partition("::")
    if not sep or not connection_name or not model:
        raise ValidationError(
            f"“{model_id}” is not a model id; write it as <connection>::<model>, e.g. simulated::writer."
        )
    return connection_name, model


def connection_models_refresh(*, connection: Connection) -> list[ModelInfo]:
    """Fetch the connection's models from its provider and cache them; raises ProviderError (readable, key-free)."""
    models = _fetch_many([connection])[connection.pk]
    if isinstance(models, ProviderError):
        raise models
    return models


def workspace_catalog(workspace: Workspace, *, user=None) -> tuple[list[dict], list[dict]]:
    """Every model of every connection `user` sees (the team's only, without one), plus `{"connection", "error"}`
    for each catalog that could not be fetched.

    Connections never fetched are fetched now, all at once.
    """
    connections = Connection.objects.filter(workspace=workspace)
    connections = list((connections.visible_to(user) if user else connections.shared()).order_by("name"))
    fetched = _fetch_many([c for c in connections if c.models_fetched_at is None])
    models, errors = [], []
    for connection in connections:
        if isinstance(fetched.get(connection.pk), ProviderError):
            errors.append({"connection": connection.name, "error": str(fetched[connection.pk])})
            continue
        models += [catalog_entry(connection, ModelInfo.from_dict(item)) for item in connection.models_cache or []]
    return models, errors


def workspace_models(workspace: Workspace, *, user=None) -> list[dict]:
    """Every model of every connection `user` sees in the workspace, as `catalog_entry` dicts."""
    return workspace_catalog(workspace, user=user)[0]


def model_info_for(
    workspace: Workspace, model_id: str, *, connections: dict[str, Connection] | None = None
) -> tuple[Connection, ModelInfo | None]:
    """The connection behind `<connection>::<model>` and the model's catalog entry, or None when the catalog
    does not list it (a local server's catalog may lag; the run still goes ahead, priced as unknown).

    `connections`, the workspace's connections by name when the caller has read them already, spares a query
    per model (a round's variants often share a connection). Raises ValidationError when the id is malformed or
    the workspace has no such connection.
    """
    connection_name, model = split_model_id(model_id)
    if connections is not None:
        connection = connections.get(connection_name)
    else:
        connection = Connection.objects.filter(workspace=workspace, name=connection_name).first()
    if connection is None:
        names = ", ".join(Connection.objects.filter(workspace=workspace).values_list("name", flat=True))
        raise ValidationError(f"This workspace has no connection named “{connection_name}” (it has: {names}).")
    if connection.models_fetched_at is None and not _failed_lately(connection):
        _fetch_many([connection])  # a failure leaves the entry unknown; the run itself will show the error
    return connection, cached_model_info(connection, model)


def cached_model_info(connection: Connection, model: str) -> ModelInfo | None:
    """The model's entry in the connection's cached catalog (never fetched here), None when not listed."""
    bare = model.split("?", 1)[0]  # simulated and fake models take options after "?"
    entry = next((item for item in connection.models_cache or [] if item.get("id") in (model, bare)), None)
    return ModelInfo.from_dict(entry) if entry else None


def catalog_entry(connection: Connection, info: ModelInfo) -> dict:
    """One model as the API and pages show it."""
    data = info.as_dict()
    return {
        "id": f"{connection.name}::{info.id}",
        "model": data.pop("id"),
        **data,
        "connection": connection.name,
        "connection_id": connection.pk,
        "kind": connection.kind,
        "simulated": connection.kind == ConnectionKind.SIMULATED,
    }


def _fetch_many(connections: list[Connection]) -> dict[int, list[ModelInfo] | ProviderError]:
    """Fetch several catalogs concurrently, store each success on its connection, return results by pk."""
    if not connections:
        return {}
    configs: dict[int, ConnectionConfig | ProviderError] = {}
    for connection in connections:
        try:
            configs[connection.pk] = ConnectionConfig.from_connection(connection)
        except SecretDecryptionError:
            configs[connection.pk] = ProviderError(
                f"The key of {connection.name} cannot be decrypted with the configured keys; enter it again."
            )
    results = async_to_sync(_list_models)(configs)
    now = timezone.now()
    for connection in connections:
        result = results[connection.pk]
        if isinstance(result, ProviderError):
            logger.warning("Model catalog of connection %s failed: %s", connection.pk, result)
            _remember_failure(connection)
            continue
        connection.models_cache = [model.as_dict() for model in result]
        connection.models_fetched_at = now
        Connection.objects.filter(pk=connection.pk).update(models_cache=connection.models_cache, models_fetched_at=now)
    return results


def _failure_key(connection: Connection) -> str:
    # The endpoint and key are part of it: a connection given another server or key is tried again at once.
    where = hashlib.sha256(f"{connection.base_url}\n{connection.api_key_encrypted}".encode()).hexdigest()[:16]
    return f"lab:catalog-failed:{connection.pk}:{where}"


def _remember_failure(connection: Connection) -> None:
    with contextlib.suppress(*REDIS_DOWN):  # then the next use tries again, as without this
        cache.set(_failure_key(connection), True, timeout=FAILED_CATALOG_RETRY_S)


def _failed_lately(connection: Connection) -> bool:
    try:
        return bool(cache.get(_failure_key(connection)))
    except REDIS_DOWN:
        return False


async def _list_models(configs: dict) -> dict[int, list[ModelInfo] | ProviderError]:
    async with httpx.AsyncClient(timeout=CATALOG_TIMEOUT, verify=tls_context()) as client:

        async def one(config: ConnectionConfig | ProviderError) -> list[ModelInfo] | ProviderError:
            if isinstance(config, ProviderError):
                return config
            try:
                return await get_adapter(config, client, retry=CATALOG_RETRY).list_models()
            except ProviderError as exc:
                return exc

        results = await asyncio.gather(*(one(config) for config in configs.values()))
    return dict(zip(configs, results, strict=True))
