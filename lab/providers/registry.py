"""Which adapter speaks for which connection kind."""

from __future__ import annotations

import httpx

from .base import Adapter, ConnectionConfig
from .simulated import SimulatedAdapter

_ADAPTERS: dict[str, type] = {"simulated": SimulatedAdapter}


def register(kind: str, adapter_class: type) -> None:
    _ADAPTERS[kind] = adapter_class


def get_adapter(config: ConnectionConfig, client: httpx.AsyncClient | None = None) -> Adapter:
    try:
        adapter_class = _ADAPTERS[config.kind]
    except KeyError:
        raise ValueError(f"No adapter for connection kind {config.kind!r}.") from None
    return adapter_class(config, client=client)
