"""promptfoo provider ids and configs → the lab's connections, models and parameters.

| promptfoo                         | runs on                                        | promptfoo's defaults sent  |
|-----------------------------------|------------------------------------------------|----------------------------|
| `openai:chat:<m>`, `openai:<m>`   | connection `openai`                            | temperature 0, max 1024    |
| … with `config.apiBaseUrl`        | an OpenAI-compatible connection at that URL    | temperature 0, max 1024    |
| `anthropic:messages:<m>`          | connection `anthropic`                         | temperature 0, max 1024    |
| `google:<m>`, `vertex:<m>`        | connection `gemini`                            | none                       |
| `openrouter:<m>`                  | connection `openrouter`                        | temperature 0, max 1024    |
| `ollama:chat:<m>` (`num_predict`) | an OpenAI-compatible connection at OLLAMA_BASE_URL | none                   |

The defaults are promptfoo's own (its OpenAI and Anthropic providers send `temperature` 0 and `max_tokens` 1024
unless the config sets them; OpenAI reasoning models get neither), so the same model is asked the same question by
both tools. An OpenAI-protocol provider's `tools`, `tool_choice` and `response_format` (`json_schema`; `json_object`
is refused) become its variant's tools, tool choice and response schema, sent natively as promptfoo sends them
(docs/tools.md). Every other config key, and every other provider prefix, is refused naming it: a key promptfoo would
send and the lab would silently drop changes the answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from lab.providers.tools import TOOL_CHOICES

from ..spec import is_number

OLLAMA = "ollama"
# Connection names for providers whose server is not one of the named kinds (set up by `connections`).
BASE_URL_CONNECTION = "openai-base-{n}"
DEFAULT_TEMPERATURE, DEFAULT_MAX_TOKENS = 0, 1024
MAX_SET_NAME = 60
# promptfoo sends neither default to these (OpenAI's reasoning models take no temperature and no max_tokens).
REASONING = re.compile(r"^(o\d(-.*)?|gpt-5.*)$")
# An OpenAI-protocol provider's config keys sent as the lab's tools, tool choice and response schema (docs/tools.md).
TOOL_KEYS = ("tools", "tool_choice", "response_format")
# config key → (the lab's file name for it, the check, what a good value is), per provider family.
_TEMPERATURE = ("temperature", lambda v: is_number(v) and 0 <= v <= 2, "a number from 0 to 2")
_TOP_P = ("topP", lambda v: is_number(v) and 0 <= v <= 1, "a number from 0 to 1")
_MAX = ("maxOutputTokens", lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 1, "a whole number ≥ 1")
_SEED = ("seed", lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0, "a whole number ≥ 0")
_STOP = ("stopSequences", lambda v: _stop_list(v) is not None, "a text or a list of up to 4 texts")
OPENAI_KEYS = {"temperature": _TEMPERATURE, "max_tokens": _MAX, "top_p": _TOP_P, "seed": _SEED, "stop": _STOP}
ANTHROPIC_KEYS = {"temperature": _TEMPERATURE, "max_tokens": _MAX, "top_p": _TOP_P, "stop_sequences": _STOP}
GEMINI_KEYS = {"temperature": _TEMPERATURE, "maxOutputTokens": _MAX, "topP": _TOP_P, "stopSequences": _STOP}
# promptfoo's Ollama provider passes Ollama's own option names; `num_predict` is its token limit.
OLLAMA_KEYS = {"temperature": _TEMPERATURE, "num_predict": _MAX, "top_p": _TOP_P, "seed": _SEED, "stop": _STOP}


def _stop_list(value: Any) -> list[str] | None:
    items = [value] if isinstance(value, str) else value
    if isinstance(items, list) and 1 <= len(items) <= 4 and all(isinstance(s, str) and s for s in items):
        return items
    return None


@dataclass
class ProviderSpec:
    index: int  # 0-based, as promptfoo counts
    id: str  # as the config writes it: `openai:chat:gpt-4o-mini`
    label: str
    connection: str  # the connection's name in the lab's file (moved to the runner's private one by the command)
    model: str
    params: dict[str, Any] = field(default_factory=dict)  # the lab's file names: temperature, maxOutputTokens …
    base_url: str = ""  # for `apiBaseUrl` and Ollama: the OpenAI-compatible server
    set_name: str = ""  # its parameter set's name in the lab's experiment: its label, unless two share one
    # `config.tools`, `tool_choice` and `response_format` as the lab's own (its variant's), None when not given.
    tools: list[dict[str, Any]] | None = None
    tool_choice: str | None = None
    response_schema: dict[str, Any] | None = None

    def combination_keys(self) -> dict[str, Any]:
        """Its tool settings as a lab combination's keys (they override the file's for its variant)."""
        keys = {"tools": self.tools, "tool-choice": self.tool_choice, "response-schema": self.response_schema}
        return {key: value for key, value in keys.items() if value is not None}

    @property
    def written(self) -> str:
        return f"{self.connection}:{self.model}"


def _route(provider_id: str) -> tuple[str, str, dict] | None:
    """(connection, model, accepted config keys) for a provider id promptfoo would send as a chat call."""
    prefixes = (
        ("openai:chat:", "openai", OPENAI_KEYS),
        ("anthropic:messages:", "anthropic", ANTHROPIC_KEYS),
        ("google:", "gemini", GEMINI_KEYS),
        ("vertex:", "gemini", GEMINI_KEYS),
        ("openrouter:", "openrouter", OPENAI_KEYS),
        ("ollama:chat:", OLLAMA, OLLAMA_KEYS),
    )
    for prefix, connection, keys in prefixes:
        if provider_id.startswith(prefix) and provider_id[len(prefix) :].strip():
            return connection, provider_id[len(prefix) :].strip(), keys
    head, _, model = provider_id.partition(":")
    # `openai:<model>` is a chat model; `openai:completion:…`, `openai:embedding:…`, `openai:responses:…` are not.
    if head == "openai" and model and ":" not in model:
        return "openai", model, OPENAI_KEYS
    return None


EMBEDDING_PREFIXES = ("openai:embedding:", "openai:embeddings:")


def grader_id(value: Any) -> tuple[str | None, str]:
    """A promptfoo grader (`options.provider` or an assertion's `provider`: an id or `{id}`) → (the lab model id
    `<connection>::<model>` on the connection the config's providers of that prefix run on, the problem when not)."""
    if isinstance(value, dict):
        extra = sorted(set(value) - {"id"})
        if extra:
            return None, f"{extra[0]}: not supported for a grader; give its id only"
        value = value.get("id")
    if not isinstance(value, str) or not value.strip():
        return None, "a provider id such as openai:chat:gpt-4o-mini"
    written = value.strip()
    for prefix in EMBEDDING_PREFIXES:  # `similar`'s embeddings model
        if written.startswith(prefix) and written[len(prefix) :].strip():
            return f"openai::{written[len(prefix) :].strip()}", ""
    route = _route(written)
    if route is None:
        return None, f"{written}: not a supported grader; use openai:chat:<model>, anthropic:messages:<model>, …"
    connection, model, _ = route
    return f"{connection}::{model}", ""


def read_providers(value: Any, problem) -> list[ProviderSpec]:
    """The config's providers, in order; `problem(where, message)` collects what is refused."""
    entries = value if isinstance(value, list) else [value]
    if value is None or not entries:
        problem("providers", "missing; list at least one, e.g. openai:chat:gpt-4o-mini")
        return []
    specs, base_urls = [], {}
    for index, entry in enumerate(entries):
        spec = _provider(index, entry, problem, base_urls)
        if spec is not None:
            specs.append(spec)
    labels = [spec.label for spec in specs]
    for spec in specs:
        unique = labels.count(spec.label) == 1 and len(spec.label) <= MAX_SET_NAME
        spec.set_name = spec.label if unique else f"provider-{spec.index + 1}"
    return specs


def _provider(index: int, entry: Any, problem, base_urls: dict[str, str]) -> ProviderSpec | None:
    where = f"providers[{index + 1}]"
    if (
        isinstance(entry, dict)
        and len(entry) == 1
        and isinstance(next(iter(entry.values())), dict)
        and "id" not in entry
    ):
        # promptfoo's older form: `{openai:chat:gpt-4o: {config: …}}`
        provider_id, body = next(iter(entry.items()))
        entry = {"id": provider_id, **body}
    if isinstance(entry, str):
        entry = {"id": entry}
    if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
        problem(where, "a provider is an id (openai:chat:gpt-4o-mini) or {id, label, config}")
        return None
    provider_id = entry["id"].strip()
    where = f"{where} ({provider_id})"
    for key in sorted(set(entry) - {"id", "label", "config"}):
        problem(where, f"{key}: not supported; a provider has id, label and config")
    route = _route(provider_id)
    if route is None:
        problem(
            where,
            "id: not a supported provider; the supported ones are openai:chat:<model>, openai:<model>, "
            "anthropic:messages:<model>, google:<model>, vertex:<model>, openrouter:<model>, ollama:chat:<model>",
        )
        return None
    connection, model, keys = route
    label = entry.get("label") if isinstance(entry.get("label"), str) else provider_id
    spec = ProviderSpec(index, provider_id, label, connection, model)
    config = entry.get("config") or {}
    if not isinstance(config, dict):
        problem(where, "config: a mapping of settings")
        return spec
    for key, raw in config.items():
        if key == "apiBaseUrl" and connection == "openai" and isinstance(raw, str) and raw.strip():
            url = raw.strip().rstrip("/")
            spec.connection = base_urls.setdefault(url, BASE_URL_CONNECTION.format(n=len(base_urls) + 1))
            spec.base_url = url
        elif key in TOOL_KEYS and keys is OPENAI_KEYS:
            message = _tool_setting(spec, key, raw)
            if message:
                problem(where, f"config: {key}: {message}")
        elif key not in keys:
            supported = [*keys, *TOOL_KEYS] if keys is OPENAI_KEYS else list(keys)
            problem(where, f"config: {key}: not supported; the supported keys are {', '.join(supported)}")
        else:
            name, good, expected = keys[key]
            if not good(raw):
                problem(where, f"config: {key}: {raw!r} is not {expected}")
            else:
                spec.params[name] = _stop_list(raw) if name == "stopSequences" else raw
    _promptfoo_defaults(spec, keys)
    return spec


def _tool_setting(spec: ProviderSpec, key: str, raw: Any) -> str:
    """Put an OpenAI-protocol provider's `tools`, `tool_choice` or `response_format` on its spec as the lab sends
    them (the same wire body promptfoo sends); the problem when the lab cannot, else ""."""
    if key == "tools":
        if not isinstance(raw, list):
            return "a list of tools in OpenAI's function format (tools from a file are not read here)"
        spec.tools = raw
    elif key == "tool_choice":
        function = raw.get("function") if isinstance(raw, dict) and raw.get("type") == "function" else None
        if isinstance(raw, str) and raw in TOOL_CHOICES:
            spec.tool_choice = raw
        elif isinstance(function, dict) and isinstance(function.get("name"), str) and set(raw) == {"type", "function"}:
            spec.tool_choice = function["name"]
        else:
            return 'auto, none, required or {"type": "function", "function": {"name": …}}'
    else:
        return _response_format(spec, raw)
    return ""


def _response_format(spec: ProviderSpec, raw: Any) -> str:
    kind = raw.get("type") if isinstance(raw, dict) else None
    if kind == "json_object":
        return (
            "json_object is not supported: the lab sends only a JSON schema natively (docs/tools.md); use "
            "{type: json_schema, json_schema: {name, schema, strict}}, or an is-json assertion"
        )
    body = raw.get("json_schema") if kind == "json_schema" else None
    if not isinstance(body, dict) or set(raw) != {"type", "json_schema"}:
        return "{type: json_schema, json_schema: {name, schema, strict}} (or json_object, which is refused)"
    extra = sorted(set(body) - {"name", "schema", "strict"})
    if extra or not isinstance(body.get("name"), str) or not isinstance(body.get("schema"), dict):
        wrong = f"{', '.join(extra)}: " if extra else ""
        return f"json_schema: {wrong}has name, schema and strict (name and schema are needed; description is refused)"
    if "strict" in body and not isinstance(body["strict"], bool):
        return "json_schema: strict: true or false"
    spec.response_schema = {"name": body["name"], "schema": body["schema"], "strict": body.get("strict", False)}
    return ""


def _promptfoo_defaults(spec: ProviderSpec, keys: dict) -> None:
    """What promptfoo sends when the config is silent (its OpenAI-protocol and Anthropic providers, not Gemini's
    or Ollama's)."""
    if keys is not OPENAI_KEYS and keys is not ANTHROPIC_KEYS:
        return
    if keys is OPENAI_KEYS and REASONING.match(spec.model.rsplit("/", 1)[-1]):
        return
    spec.params.setdefault("temperature", DEFAULT_TEMPERATURE)
    spec.params.setdefault("maxOutputTokens", DEFAULT_MAX_TOKENS)
