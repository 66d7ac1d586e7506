"""What an assertion may know about one answer (a leaf module: the checks and the grader both read it)."""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any


@dataclass(frozen=True)
class AnswerFacts:
    """What an assertion may look at: the answer's text, its latency and cost (None = unknown), the row's
    variables for `{{var}}` in values, and for tool checks the calls it made and the tools it was offered."""

    output: str
    latency_ms: int | None
    cost: Decimal | float | None
    vars: dict[str, Any]
    tool_calls: list[dict] = field(default_factory=list)
    tools: list[dict] = field(default_factory=list)
