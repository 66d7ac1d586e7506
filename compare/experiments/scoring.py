"""What an experiment's judge does: compare may not import judging, so judging registers a scorer (compare/hooks.py).

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
    category: str = ""  # a classification type's category for the answer


class Scorer(Protocol):
    types: tuple[str, ...]  # the evaluation types (scales) it knows, e.g. "binary", "1-5", "binary-classification"
    classification_types: tuple[str, ...]  # those of them that classify rather than score
    classification_keys: tuple[str, ...]  # the keys a classification type's evaluation may have

    def classification_problems(self, type: str, settings: dict) -> list[str]:
        """What is wrong with a classification type's settings (criteria, target, categories …)."""

    def placeholders(self, type: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The placeholders a custom evaluator prompt of this type must contain, and all it may contain."""

    def check(
        self, *, workspace: Workspace, model_id: str, candidates: list[tuple[str, str]]
    ) -> tuple[list[str], list[str]]:
        """Why `model_id` cannot judge answers of `candidates` ((name, model id) pairs: it is not a usable model),
        and, apart, each candidate it shares a model family with (a judge may favour its own kind)."""

    def prepare(
        self, *, workspace: Workspace, model_id: str, type: str, prompt: str, classification: dict | None = None
    ) -> Any:
        """The judge, resolved once (ORM) so the async scoring never touches the database."""

    def request_images(self, judge: Any, output: Any, *, workspace_id: int) -> tuple[list[dict], str]:
        """(the images of the request `output` answered to send this judge, the evaluation's note): the images when
        the judge's model may read them, else none and a note saying it judged the text only (ORM: call it before
        scoring)."""

    def input_tokens(self, judge: Any, *, request: str, response: str, reference: str = "") -> int:
        """Our estimate of one scoring call's input tokens (4 characters a token)."""

    async def score(
        self,
        judge: Any,
        *,
        request: str,
        response: str,
        http: httpx.AsyncClient,
        limiter: Limiter,
        reference: str = "",
        columns: dict | None = None,
        images: list[dict] | None = None,
    ) -> Score:
        """Score (or classify) one answer to `request` on its own (one call, one retry when the reply cannot be
        read); a `reference` answer, when the dataset row has one, is shown to the judge for comparison; `columns`
        are the row's values a classification may show; `images` (from `request_images`) are shown after the text."""
