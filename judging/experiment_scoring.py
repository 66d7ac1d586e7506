"""Judging's scorer for experiments, registered with compare at start-up: pointwise, on one overall metric.

An experiment file's `evaluation` names a type (binary, 1-3, 1-5, 1-10), a judge model and optionally a custom
evaluator prompt; each answer is scored on its own on the metric Overall, so it gets one score and one reason.
The family rule is checked here too; the experiment decides whether sharing a family is a warning or a refusal.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import httpx
from django.core.exceptions import ValidationError

from compare.experiments.scoring import Score
from lab.engine.limiter import Limiter
from lab.models import Connection, Workspace
from lab.providers.answer import estimate_tokens

from .calls import JudgeClient, JudgeModel, judge_model_resolve
from .classification import Classifier, JudgeKind, classification_prompt, classifier_check
from .classification_calls import classify_answers
from .families import Candidate, family_warnings
from .images import judge_images, request_images
from .judgement import Candidate as Answer
from .pointwise import answer_score_async
from .prompts import Shown, pointwise_prompt
from .rubric import OVERALL, PLACEHOLDERS, Rubric, Scale, required_placeholders


@dataclass(frozen=True)
class ExperimentJudge:
    model: JudgeModel
    rubric: Rubric | None
    classifier: Classifier | None = None


# An experiment file's classification types → the judge kinds (Evidently's binary and multiclass templates).
CLASSIFICATION_TYPES = {"binary-classification": JudgeKind.BINARY, "multiclass-classification": JudgeKind.MULTICLASS}
# The file's keys → classifier_check's (the file writes them with dashes, as its other keys).
CLASSIFICATION_KEYS = {
    "criteria": "criteria",
    "target": "target",
    "non-target": "non_target",
    "categories": "categories",
    "uncertainty": "uncertainty",
    "include-reasoning": "include_reasoning",
    "include-score": "include_score",
}


def classifier_from_file(type: str, settings: dict) -> Classifier:
    data = {ours: settings[theirs] for theirs, ours in CLASSIFICATION_KEYS.items() if theirs in settings}
    if isinstance(data.get("categories"), dict):  # `categories: {friendly: warm, …}`
        data["categories"] = [{"name": k, "description": v or ""} for k, v in data["categories"].items()]
    if isinstance(data.get("uncertainty"), str):
        data["uncertainty"] = data["uncertainty"].replace("-", "_")
    columns = settings.get("input-columns") or []
    return classifier_check(kind=CLASSIFICATION_TYPES[type], data=data, input_columns=columns)


class PointwiseScorer:
    types = (*Scale.values, *CLASSIFICATION_TYPES)
    classification_types = tuple(CLASSIFICATION_TYPES)
    classification_keys = (*CLASSIFICATION_KEYS, "input-columns")

    def classification_problems(self, type: str, settings: dict) -> list[str]:
        try:
            classifier_from_file(type, settings)
        except ValidationError as exc:
            return [
                m.replace("non_target", "non-target").replace("input_columns", "input-columns") for m in exc.messages
            ]
        return []

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

    def prepare(
        self, *, workspace: Workspace, model_id: str, type: str, prompt: str, classification: dict | None = None
    ) -> ExperimentJudge:
        model = judge_model_resolve(workspace=workspace, model_id=model_id)
        if type in CLASSIFICATION_TYPES:
            return ExperimentJudge(
                model=model, rubric=None, classifier=classifier_from_file(type, classification or {})
            )
        return ExperimentJudge(model=model, rubric=Rubric(scale=type, metrics=(OVERALL,), prompt=prompt))

    def request_images(self, judge: ExperimentJudge, output, *, workspace_id: int) -> tuple[list[dict], str]:
        return judge_images(judge.model, request_images([output], workspace_id=workspace_id))

    def input_tokens(self, judge: ExperimentJudge, *, request: str, response: str, reference: str = "") -> int:
        if judge.classifier is not None:
            columns = dict.fromkeys(judge.classifier.input_columns, "")
            prompt = classification_prompt(judge.classifier, request=request, response=response, columns=columns)
        else:
            prompt = pointwise_prompt(judge.rubric, Shown("A", request, response, reference))
        return estimate_tokens("".join(message["content"] for message in prompt.messages))

    async def score(
        self,
        judge: ExperimentJudge,
        *,
        request: str,
        response: str,
        http: httpx.AsyncClient,
        limiter: Limiter,
        reference: str = "",
        columns: dict | None = None,
        images: list[dict] | None = None,
    ) -> Score:
        if judge.classifier is not None:
            return await self._classify(judge, request, response, http, limiter, columns or {}, images)
        result = await answer_score_async(
            judge=judge.model,
            rubric=judge.rubric,
            prompt=request,
            response=response,
            reference=reference,
            http=http,
            limiter=limiter,
            images=images,
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

    async def _classify(self, judge, request, response, http, limiter, columns, images=None) -> Score:
        """One answer classified (one call, one retry), the way a comparison's classification judge does it."""
        client = JudgeClient(judge.model, client=http, limiter=limiter, images=images)
        missing = [name for name in judge.classifier.input_columns if name not in columns]
        if missing:
            return Score(score=None, scale_score=None, reason=f"This row has no column {', '.join(missing)}.")
        judgement = await classify_answers(
            client=client,
            classifier=judge.classifier,
            candidates=[Answer(0, request, response)],
            columns=columns,
            rng=random.Random(0),
        )
        ledger = client.ledger
        category = judgement.categories.get(0, "")
        score = judgement.totals.get(0)
        reason = judgement.scores[0]["classification"].reason if category else judgement.error
        return Score(
            score=score,
            scale_score=score,
            reason=reason,
            category=category,
            calls=ledger.calls,
            input_tokens=ledger.input_tokens,
            output_tokens=ledger.output_tokens,
            cost=ledger.cost,
        )
