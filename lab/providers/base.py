"""The adapter interface every provider implements, and the plain data that crosses it.

Adapters are async and know nothing of the ORM: they get a `ConnectionConfig` (a snapshot of a
`Connection`, key already decrypted) and speak one wire protocol over httpx.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Protocol

# The parameters a comparison may set; unset ones are never sent, so each model keeps its default.
PARAMETERS = (
    "temperature",
    "top_p",
    "top_k",
    "max_tokens",
    "seed",
    "stop",
    "presence_penalty",
    "frequency_penalty",
)


# Calls a new connection runs at once: enough for the largest comparison (compare.models.MAX_VARIANTS), so its
# columns all start together and none waits for a slot the others hold (docs/fairness.md).
DEFAULT_MAX_CONCURRENCY = 5


@dataclass(frozen=True)
class ConnectionConfig:
    name: str
    kind: str
    base_url: str = ""
    api_key: str = field(default="", repr=False)
    max_concurrency: int = DEFAULT_MAX_CONCURRENCY
    rpm: int = 60
    connection_id: int | None = None
    tpm: int = 0  # tokens a minute (input + output); 0: no token budget

    @classmethod
    def from_connection(cls, connection) -> ConnectionConfig:
        return cls(
            name=connection.name,
            kind=connection.kind,
            base_url=connection.base_url,
            api_key=connection.api_key(),
            max_concurrency=connection.max_concurrency,
            rpm=connection.rpm,
            connection_id=connection.pk,
            tpm=connection.tpm,
        )


@dataclass(frozen=True)
class ChatRequest:
    model: str  # the provider's model name, without the `<connection>::` prefix
    # [{"role": "system" | "user" | "assistant", "content": ...}], system first; a trailing assistant one is a
    # prefill. Content is text today; each adapter reads it only in its `wire_messages`, so parts can come later.
    messages: list[dict[str, Any]]
    params: dict[str, Any] = field(default_factory=dict)  # only the parameters that were set
    # OpenAI function-format tools and the tool choice (auto, none, required or a name), converted per adapter
    # (lab.providers.tools); never executed.
    tools: list[dict[str, Any]] | None = None
    tool_choice: str | None = None
    # `{"name", "schema", "strict"}` sent natively (response_format, a forced tool, responseSchema), or None.
    response_schema: dict[str, Any] | None = None


# --- Stream events, in the order a stream yields them: deltas, then at most one usage, then finish or error.


@dataclass(frozen=True)
class TextDelta:
    text: str


@dataclass(frozen=True)
class ToolCallDelta:
    """A piece of a tool call: the call at `index` of the answer, its id and name when they first arrive, and a
    fragment of its JSON arguments (Gemini sends a call whole: one delta with all of it)."""

    index: int
    id: str = ""
    name: str = ""
    arguments: str = ""


@dataclass(frozen=True)
class Usage:
    input_tokens: int | None
    output_tokens: int | None
    estimated: bool = False  # True when the provider gave no usage and we counted ourselves


@dataclass(frozen=True)
class Finish:
    reason: str  # "stop", "length", "content_filter", … as the provider said it, normalised where obvious


@dataclass(frozen=True)
class StreamError:
    message: str  # readable, never containing the API key
    status: int | None = None


StreamEvent = TextDelta | ToolCallDelta | Usage | Finish | StreamError


@dataclass(frozen=True)
class Completion:
    text: str
    finish_reason: str
    usage: Usage
    tool_calls: tuple[dict, ...] = ()  # [{"id", "name", "arguments"}], as Answer keeps them


@dataclass(frozen=True)
class ModelInfo:
    id: str  # provider's model name
    name: str = ""
    context_length: int | None = None
    max_output_tokens: int | None = None
    # None means the provider publishes nothing: every parameter is assumed supported.
    supported_params: frozenset[str] | None = None
    input_price_per_mtok: float | None = None  # USD per million input tokens; None = unknown
    output_price_per_mtok: float | None = None

    def as_dict(self) -> dict:
        return {
            "id": self.id,
            "name": self.name or self.id,
            "context_length": self.context_length,
            "max_output_tokens": self.max_output_tokens,
            "supported_params": sorted(self.supported_params) if self.supported_params is not None else None,
            "input_price_per_mtok": self.input_price_per_mtok,
            "output_price_per_mtok": self.output_price_per_mtok,
        }

    @classmethod
    def from_dict(cls, data: dict) -> ModelInfo:
        params = data.get("supported_params")
        return cls(
            id=data["id"],
            name=data.get("name") or data["id"],
            context_length=data.get("context_length"),
            max_output_tokens=data.get("max_output_tokens"),
            supported_params=frozenset(params) if params is not None else None,
            input_price_per_mtok=data.get("input_price_per_mtok"),
            output_price_per_mtok=data.get("output_price_per_mtok"),
        )


class ProviderError(Exception):
    """A request failed before streaming began (after retries); the message is safe to show."""

    def __init__(self, message: str, status: int | None = None):
        super().__init__(message)
        self.status = status


class Adapter(Protocol):
    config: ConnectionConfig

    def stream(self, request: ChatRequest, *, model_info: ModelInfo | None = None) -> AsyncIterator[StreamEvent]:
        """Stream one chat completion. Closing the iterator (aclose) aborts the HTTP request at once."""

    async def complete(
        self, request: ChatRequest, *, json_schema: dict | None = None, model_info: ModelInfo | None = None
    ) -> Completion:
        """One non-streamed completion, optionally constrained to a JSON schema (used by the judge)."""

    async def list_models(self) -> list[ModelInfo]:
        """The provider's models with supported parameters and prices where it publishes them."""
