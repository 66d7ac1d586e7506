"""Judging's scorer for experiments, registered with compare at start-up: pointwise, on one overall metric.

An experiment file's `evaluation` names a type (binary, 1-3, 1-5, 1-10), a judge model and optionally a custom
evaluator prompt; each answer is scored on its own on the metric Overall, so it gets one score and one reason.
The family rule is checked here too; the experiment decides whether sharing a family is a warning or a refusal.
"""

from __future__ import annotations

from dataclasses import dataclass

import httpx
from django.core.exceptions import ValidationError

from compare.experiments.scoring import Score
from lab.engine.limiter import Limiter
from lab.models import Connection, Workspace
from lab.providers.answer import estimate_tokens

from .calls import JudgeModel, judge_model_resolve
from .families import Candidate, family_warnings
from .pointwise import answer_score_async
from .prompts import Shown, pointwise_prompt
from .rubric import OVERALL, PLACEHOLDERS, Rubric, Scale, required_placeholders


@dataclass(frozen=True)
class ExperimentJudge:
    model: JudgeModel
    rubric: Rubric


class PointwiseScorer:
    types = tuple(Scale.values)

    def placeholders(self, type: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
        return required_placeholders(type), tuple(PLACEHOLDERS)

    def check(
        self, *, workspace: Workspace, model_id: str, candidates: list[tuple[str, str]]
    ) -> tuple[list[str], list[str]]:
        try:
            judge = judge_model_resolve(workspace=workspace, model_id=model_id)
        except ValidationError as exc:
            return exc.messages, []
        kinds = dict(Connection.objects.filter(workspace=workspace).values_list("name", "kind"))
        shown = [Candidate(name, model, kinds.get(model.split("::", 1)[0], "")) for name, model in candidates]
        return [], family_warnings(judge.model_id, judge.kind, shown)

    def prepare(self, *, workspace: Workspace, model_id: str, type: str, prompt: str) -> ExperimentJudge:
        model = judge_model_resolve(workspace=workspace, model_id=model_id)
        return ExperimentJudge(model=model, rubric=Rubric(scale=type, metrics=(OVERALL,), prompt=prompt))

    def input_tokens(self, judge: ExperimentJudge, *, request: str, response: str) -> int:
        prompt = pointwise_prompt(judge.rubric, Shown("A", request, response))
        return estimate_tokens("".join(message["content"] for message in prompt.messages))

    async def score(
        self, judge: ExperimentJudge, *, request: str, response: str, http: httpx.AsyncClient, limiter: Limiter
    ) -> Score:
        result = await answer_score_async(
            judge=judge.model, rubric=judge.rubric, prompt=request, response=response, http=http, limiter=limiter
        )
        return Score(
            score=result.score,
            scale_score=result.scale_score,
            reason=result.reason,
            calls=result.calls,
            input_tokens=result.input_tokens,
            output_tokens=result.output_tokens,
            cost=result.cost,
        )
