"""Facts about well-known models that their providers' APIs do not publish: list prices, output limits, and
which few are text-only (they refuse an image).

OpenAI, Anthropic and Gemini list models without prices, and Anthropic without output limits, yet the lab
needs both (cost per answer; Anthropic's required `max_tokens`). These are the providers' published list
prices (USD per million tokens, standard tier, short prompts) as of 2025. Edit the table when they change;
a model missing here simply has an unknown cost (shown as such, never as 0).
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True)
class Known:
    input_price_per_mtok: float | None = None
    output_price_per_mtok: float | None = None
    max_output_tokens: int | None = None
    images: bool = True  # whether it reads image input; the few known to be text-only say False
    # Whether it takes a native response schema (json_schema response_format, a forced tool, responseSchema).
    structured_output: bool = True


KNOWN = {
    # OpenAI
    "gpt-4o": Known(2.50, 10.00),
    "gpt-4o-mini": Known(0.15, 0.60),
    "gpt-4.1": Known(2.00, 8.00),
    "gpt-4.1-mini": Known(0.40, 1.60),
    "gpt-4.1-nano": Known(0.10, 0.40),
    "gpt-5": Known(1.25, 10.00),
    "gpt-5-mini": Known(0.25, 2.00),
    "gpt-5-nano": Known(0.05, 0.40),
    "o1": Known(15.00, 60.00),
    "o3": Known(2.00, 8.00),
    "o3-mini": Known(1.10, 4.40, images=False),
    "o1-mini": Known(1.10, 4.40, images=False, structured_output=False),
    "gpt-3.5-turbo": Known(0.50, 1.50, images=False, structured_output=False),
    "o4-mini": Known(1.10, 4.40),
    # Anthropic
    "claude-opus-4-5": Known(5.00, 25.00, 64000),
    "claude-opus-4-1": Known(15.00, 75.00, 32000),
    "claude-opus-4": Known(15.00, 75.00, 32000),
    "claude-sonnet-4-5": Known(3.00, 15.00, 64000),
    "claude-sonnet-4": Known(3.00, 15.00, 64000),
    "claude-3-7-sonnet": Known(3.00, 15.00, 64000),
    "claude-haiku-4-5": Known(1.00, 5.00, 64000),
    "claude-3-5-haiku": Known(0.80, 4.00, 8192),
    "claude-3-haiku": Known(0.25, 1.25, 4096),
    # Google Gemini
    "gemini-2.5-pro": Known(1.25, 10.00, 65536),
    "gemini-2.5-flash": Known(0.30, 2.50, 65536),
    "gemini-2.5-flash-lite": Known(0.10, 0.40, 65536),
    "gemini-2.0-flash": Known(0.10, 0.40, 8192),
    "gemini-2.0-flash-lite": Known(0.075, 0.30, 8192),
}

# A dated or pinned release has its family's price: gpt-4o-2024-08-06, claude-sonnet-4-5-20250929, gemini-2.0-flash-001.
_RELEASE_SUFFIX = re.compile(r"-(\d{8}|\d{4}-\d{2}-\d{2}|latest|\d{3})$")


def known_model(model: str) -> Known | None:
    name = model.removeprefix("models/")
    return KNOWN.get(name) or KNOWN.get(_RELEASE_SUFFIX.sub("", name))


def takes_images(model: str) -> bool | None:
    """Whether a model reads images: False only for a model known to be text-only, None when it is not known (then
    the lab lets the provider decide)."""
    known = known_model(model.split("?", 1)[0])  # simulated and fake models take options after "?"
    return known.images if known else None


def takes_response_schema(model: str) -> bool | None:
    """Whether a model takes a native response schema: False only for a model known not to, None when unknown."""
    known = known_model(model.split("?", 1)[0])
    return known.structured_output if known else None
