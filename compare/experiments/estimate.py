"""What an experiment will cost before it runs: calls, tokens and dollars for the answers and their evaluations.

Input tokens are counted from the rendered conversations (system prompt and every message) at about 4 characters a
token. Output tokens are the parameter set's maxOutputTokens (a model rarely stops far short of it when it has more
to say), else what the model wrote on average in this workspace before, else DEFAULT_OUTPUT_TOKENS. Both are
calibrated by the workspace's history: the ratio of the tokens providers reported to our count, per model, over its
last HISTORY answers in its newest comparisons (or evaluations).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from django.db.models.functions import Length

from lab.providers.answer import cost_of
from lab.providers.message_rules import estimate_input_tokens
from lab.templating import render

from ..hooks import scorer
from ..models import Output, OutputStatus, Variant
from .models import Evaluation, EvaluationStatus
from .plan import Plan

DEFAULT_OUTPUT_TOKENS = 300
DEFAULT_JUDGE_OUTPUT_TOKENS = 60  # a JSON object with a score and a sentence of reason
HISTORY = 200
HISTORY_VARIANTS = 50  # at most this many of the model's newest variants are looked at, a query each


@dataclass
class Part:
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float = 0.0
    unpriced_calls: int = 0  # calls whose model has no known price: not in `cost`

    def add(self, input_tokens: int, output_tokens: int, cost: float | None) -> None:
        self.calls += 1
        self.input_tokens += input_tokens
        self.output_tokens += output_tokens
        if cost is None:
            self.unpriced_calls += 1
        else:
            self.cost += cost


@dataclass
class Estimate:
    combinations: int
    rows: int
    answers: Part = field(default_factory=Part)
    evaluations: Part = field(default_factory=Part)
    notes: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # shown wherever the results are: printed, page, report

    @property
    def calls(self) -> int:
        return self.answers.calls + self.evaluations.calls

    @property
    def unpriced_calls(self) -> int:
        return self.answers.unpriced_calls + self.evaluations.unpriced_calls

    @property
    def tokens(self) -> int:
        return sum(p.input_tokens + p.output_tokens for p in (self.answers, self.evaluations))

    @property
    def cost(self) -> float:
        return self.answers.cost + self.evaluations.cost

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "calls": self.calls, "tokens": self.tokens, "cost": self.cost}


@dataclass(frozen=True)
class Calibration:
    input_ratio: float = 1.0  # reported input tokens ÷ our count
    output_mean: float | None = None  # mean output tokens, when there is history


def experiment_estimate(plan: Plan, workspace) -> Estimate:
    config = plan.config
    rows = plan.rows or [None]
    estimate = Estimate(combinations=len(config.combinations), rows=len(plan.rows))
    calibrations = {model: _answers_history(workspace, model) for model in config.models}
    judge, judge_calibration = _judge(plan, workspace)
    for combination in config.combinations:
        calibration = calibrations[combination.model]
        output_tokens = _output_tokens(combination.params.params.get("max_tokens"), calibration)
        info = plan.infos.get(combination.model)
        # The whole conversation is sent: the system prompt and every message, not only the last user one.
        templates = [config.system_prompt] if config.system_prompt else []
        templates += [message["content"] for message in combination.prompt.own_messages()]
        for row in rows:
            values = {**config.variables, **(row.vars if row else {}), **combination.prompt.variables}
            sent = [{"content": render(template, values).text} for template in templates]
            input_tokens = round(estimate_input_tokens(sent) * calibration.input_ratio)
            estimate.answers.add(input_tokens, output_tokens, cost_of(info, input_tokens, output_tokens))
            if judge is not None:
                prompt = render(combination.prompt.template, values).text
                _add_evaluation(estimate, plan, judge, judge_calibration, prompt, output_tokens)
    _notes(estimate, plan, calibrations)
    return estimate


def _add_evaluation(estimate: Estimate, plan: Plan, judge: Any, calibration: Calibration, prompt: str, answer: int):
    response = "x" * (answer * 4)  # only its length matters: about `answer` tokens
    counted = scorer().input_tokens(judge, request=prompt, response=response)
    input_tokens = round(counted * calibration.input_ratio)
    output_tokens = round(calibration.output_mean or DEFAULT_JUDGE_OUTPUT_TOKENS)
    info = plan.infos.get(plan.config.evaluation.model)
    estimate.evaluations.add(input_tokens, output_tokens, cost_of(info, input_tokens, output_tokens))


def _output_tokens(max_tokens: int | None, calibration: Calibration) -> int:
    if max_tokens and calibration.output_mean is not None:
        return round(min(max_tokens, calibration.output_mean))
    return round(max_tokens or calibration.output_mean or DEFAULT_OUTPUT_TOKENS)


def _judge(plan: Plan, workspace) -> tuple[Any, Calibration]:
    evaluation = plan.config.evaluation
    if evaluation is None:
        return None, Calibration()
    judge = scorer().prepare(
        workspace=workspace,
        model_id=evaluation.model,
        type=evaluation.type,
        prompt=evaluation.prompt,
        classification=evaluation.classification,
    )
    return judge, _judge_history(workspace, evaluation.model)


def _answers_history(workspace, model: str) -> Calibration:
    """The model's answers in the workspace's newest comparisons that used it, up to HISTORY, newest first.

    Looked up a variant at a time: one query over all of the model's answers read every one of them to sort them
    (105,000 answers: 0.3 s before an experiment's first call, growing with the workspace); a variant's answers
    are at most its comparison's rows."""
    variants = Variant.objects.filter(group__workspace=workspace, model=model).order_by("-id")
    answers = (
        Output.objects.filter(
            status=OutputStatus.OK, tokens_estimated=False, input_tokens__isnull=False, output_tokens__isnull=False
        )
        .annotate(chars=Length("rendered_prompt") + Length("rendered_system_prompt"))
        .order_by("-id")
    )
    recent: list[tuple[int, int, int]] = []
    for variant_id in variants.values_list("pk", flat=True)[:HISTORY_VARIANTS]:
        wanted = HISTORY - len(recent)
        recent += answers.filter(variant_id=variant_id).values_list("input_tokens", "output_tokens", "chars")[:wanted]
        if len(recent) >= HISTORY:
            break
    if not recent:
        return Calibration()
    counted = sum(max(1, round(chars / 4)) for _, _, chars in recent)
    return Calibration(
        input_ratio=sum(i for i, _, _ in recent) / counted, output_mean=sum(o for _, o, _ in recent) / len(recent)
    )


def _judge_history(workspace, model: str) -> Calibration:
    recent = list(
        Evaluation.objects.filter(
            experiment__group__workspace=workspace,
            experiment__config__evaluation__model=model,
            status=EvaluationStatus.DONE,
            judge_calls=1,  # a retried call would count two prompts against one estimate
            estimated_input_tokens__gt=0,
        )
        .order_by("-id")
        .values_list("input_tokens", "output_tokens", "estimated_input_tokens")[:HISTORY]
    )
    if not recent:
        return Calibration()
    return Calibration(
        input_ratio=sum(i for i, _, _ in recent) / sum(e for _, _, e in recent),
        output_mean=sum(o for _, o, _ in recent) / len(recent),
    )


def _notes(estimate: Estimate, plan: Plan, calibrations: dict[str, Calibration]) -> None:
    for combination in plan.config.combinations:
        if combination.params.params.get("max_tokens") or calibrations[combination.model].output_mean is not None:
            continue
        estimate.notes.append(
            f"Answers without maxOutputTokens are assumed to be {DEFAULT_OUTPUT_TOKENS} tokens long until this "
            "workspace has answers of their models; set maxOutputTokens for a firm upper bound."
        )
        break
    for part, name in ((estimate.answers, "answers"), (estimate.evaluations, "evaluations")):
        if part.unpriced_calls:
            estimate.notes.append(
                f"{part.unpriced_calls} of the {name} use a model without a known price: the cost leaves them out, "
                "and a budget cap cannot count them."
            )
    estimate.notes += plan.warnings
    estimate.warnings += plan.family_warnings
