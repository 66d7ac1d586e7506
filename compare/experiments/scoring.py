"""Where an experiment's judge comes from: compare may not import judging, so judging registers a scorer here.

The judging app registers one at start-up (judging/apps.py); without it an experiment file's `evaluation` is an
error, and everything else (answers, schema checks) still works.
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Any, Protocol

import httpx

from lab.engine.limiter import Limiter
from lab.models import Workspace


@dataclass
class Score:
    score: float | None  # 0–1; None when the judge gave nothing usable
    scale_score: float | None  # on the evaluation type's own scale
    reason: str
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: Decimal | None = None  # USD; None when the judge's price is unknown


class Scorer(Protocol):
    types: tuple[str, ...]  # the evaluation types (scales) it knows, e.g. "binary", "1-5"

    def placeholders(self, type: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The placeholders a custom evaluator prompt of this type must contain, and all it may contain."""

    def check(
        self, *, workspace: Workspace, model_id: str, candidates: list[tuple[str, str]]
    ) -> tuple[list[str], list[str]]:
        """Why `model_id` cannot judge answers of `candidates` ((name, model id) pairs: it is not a usable model),
        and, apart, each candidate it shares a model family with (a judge may favour its own kind)."""

    def prepare(self, *, workspace: Workspace, model_id: str, type: str, prompt: str) -> Any:
        """The judge, resolved once (ORM) so the async scoring never touches the database."""

    def input_tokens(self, judge: Any, *, request: str, response: str) -> int:
        """Our estimate of one scoring call's input tokens (4 characters a token)."""

    async def score(
        self, judge: Any, *, request: str, response: str, http: httpx.AsyncClient, limiter: Limiter
    ) -> Score:
        """Score one answer to `request` on its own (one call, one retry when the reply cannot be read)."""


_scorers: list[Scorer] = []


def register_scorer(scorer: Scorer) -> None:
    """Judging calls this once at start-up; the last registered scorer is the one used."""
    _scorers.append(scorer)


def scorer() -> Scorer | None:
    return _scorers[-1] if _scorers else None
