"""Scoring one answer on its own (pointwise): what experiments call for every combination they run.

    judge = judge_model_resolve(workspace=workspace, model_id="openai::gpt-4.1-mini")
    rubric = rubric_check(scale="1-5", metrics=[...], prompt=custom_prompt)   # or Rubric(scale="1-5")
    result = answer_score(judge=judge, rubric=rubric, prompt="…", response="…")
    result.score, result.scale_score, result.reason, result.input_tokens, result.cost

From async code (many answers at once), call `answer_score_async` with one shared httpx client and limiter.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import httpx

from lab.engine.limiter import BATCH, Limiter
from lab.engine.runtime import runtime

from .calls import Ask, JudgeClient, JudgeModel
from .judgement import MetricScore
from .prompts import Shown, pointwise_prompt
from .replies import read_metric_scores
from .rubric import Rubric, nothing_judged, weighted_score, weights_over


@dataclass
class PointwiseScore:
    score: float | None  # weighted over the metrics judged, 0–1; None when no metric could be judged
    scale_score: float | None  # the same on the rubric's own scale, e.g. 4.2 on 1–5 (1 or 0 for one binary metric)
    reason: str  # the judge's reasons, metric by metric
    metrics: dict[str, MetricScore] = field(default_factory=dict)
    missing: list[dict[str, str]] = field(default_factory=list)  # [{"name", "reason"}] of metrics left out
    weights: dict[str, float] = field(default_factory=dict)  # after renormalising over the metrics judged
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: Decimal | None = None  # USD of judging; None when the judge's price is unknown
    log: list[dict[str, Any]] = field(default_factory=list)


async def answer_score_async(
    *,
    judge: JudgeModel,
    rubric: Rubric,
    prompt: str,
    response: str,
    http: httpx.AsyncClient,
    limiter: Limiter,
    reference: str = "",
    images: list[dict] | None = None,
) -> PointwiseScore:
    """Score `response` to `prompt` on every metric of `rubric` (one call, one retry on a bad reply); a
    `reference` answer, when given, is shown to the judge for comparison, and `images` (judging/images.py) after
    the text."""
    # Experiments' scoring is batch work.
    client = JudgeClient(judge, client=http, limiter=limiter, lane=BATCH, images=images)
    shown = Shown("A", prompt, response, reference)
    ask = Ask(
        kind="pointwise",
        subject="A",
        orders=(("A",), ("A",)),
        build=lambda order: pointwise_prompt(rubric, shown),
        read=lambda text, order: read_metric_scores(text, rubric),
    )
    read = await client.ask(ask)
    ledger = client.ledger
    result = PointwiseScore(
        score=None,
        scale_score=None,
        reason="",
        calls=ledger.calls,
        input_tokens=ledger.input_tokens,
        output_tokens=ledger.output_tokens,
        cost=ledger.cost,
        log=ledger.log,
    )
    for metric in rubric.metrics:
        scored = read.values.get(metric.name)
        if scored is None:
            result.missing.append({"name": metric.name, "reason": read.problem(metric.name)})
        else:
            result.metrics[metric.name] = MetricScore(scored.raw, rubric.scaled(scored.raw), scored.reason)
    _summarise(result, rubric, result.metrics)
    return result


def _summarise(result: PointwiseScore, rubric: Rubric, metrics: Mapping[str, MetricScore]) -> None:
    if not metrics:
        result.reason = nothing_judged(result.missing)
        return
    result.weights = weights_over([rubric.metric(name) for name in metrics])
    result.score = weighted_score(result.weights, metrics)
    result.scale_score = rubric.low + result.score * (rubric.high - rubric.low)
    if len(metrics) == 1:
        result.reason = next(iter(metrics.values())).reason
    else:
        result.reason = " ".join(f"{name}: {score.reason}" for name, score in metrics.items())


def answer_score(
    *, judge: JudgeModel, rubric: Rubric, prompt: str, response: str, timeout_s: float | None = None
) -> PointwiseScore:
    """The same from sync code (a management command, a task), on the process's engine loop: its HTTP client and
    the connections' shared scheduler. `timeout_s` bounds the wait (RunTimedOut, the call cancelled)."""
    engine = runtime()
    call = answer_score_async(
        judge=judge, rubric=rubric, prompt=prompt, response=response, http=engine.client, limiter=engine.limiter
    )
    return engine.run(call, timeout=timeout_s)
