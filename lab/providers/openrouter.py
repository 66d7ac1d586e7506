"""OpenRouter: the OpenAI protocol plus a catalog with each model's supported parameters and prices.

Its streams also carry SSE comment lines (`: OPENROUTER PROCESSING`) and report upstream failures as a data
chunk `{"error": {...}}` after the answer began; the shared parser handles both.
"""

from __future__ import annotations

from .base import PARAMETERS, ModelInfo
from .openai import OpenAICompatibleAdapter


def per_million(price: object) -> float | None:
    """OpenRouter prices are USD per token as strings ("0.000003"); "-1" means variable (a router), so unknown."""
    try:
        value = float(price)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return None if value < 0 else round(value * 1_000_000, 6)


class OpenRouterAdapter(OpenAICompatibleAdapter):
    default_base_url = "https://openrouter.ai/api/v1"

    def headers(self) -> dict[str, str]:
        # OpenRouter's optional attribution headers: show up as "Prompt Lab" in the account's activity.
        return {**super().headers(), "x-title": "Prompt Lab"}

    def model_info(self, entry: dict) -> ModelInfo:
        pricing = entry.get("pricing") or {}
        supported = entry.get("supported_parameters")
        top_provider = entry.get("top_provider") or {}
        return ModelInfo(
            id=entry["id"],
            name=entry.get("name") or entry["id"],
            context_length=entry.get("context_length"),
            max_output_tokens=top_provider.get("max_completion_tokens"),
            supported_params=frozenset(supported) & frozenset(PARAMETERS) if isinstance(supported, list) else None,
            input_price_per_mtok=per_million(pricing.get("prompt")),
            output_price_per_mtok=per_million(pricing.get("completion")),
        )
