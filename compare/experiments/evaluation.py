"""Evaluating an experiment's answers once their round has finished: the schema check and the judge's score.

The evaluation task (queued when a round finishes) and the command line (after running a round itself) both call
`experiment_round_evaluate`; each evaluation is claimed with a conditional UPDATE and a deadline (lab.jobs), so no
answer is judged twice and a dead worker's evaluations are failed by the sweeper. A round's answers are judged
concurrently on the process's engine loop (lab.engine.runtime: its HTTP client and the connections' shared
scheduler), and the time limit is enforced here, by the caller, on every pool.
"""

from __future__ import annotations

import asyncio
import logging
import time
from dataclasses import dataclass, field
from typing import Any

from django.core.exceptions import ValidationError
from django.utils import timezone

from lab.catalog import model_info_for
from lab.engine.runtime import Runtime, RunTimedOut, runtime
from lab.jobs.kinds import kind
from lab.jobs.lifecycle import job_claim, job_deadline, job_time_limit_s

from ..datasets.round_rows import round_reference
from ..hooks import scorer
from ..models import ROUND_UNFINISHED, Output, OutputStatus
from .announce import experiment_announce
from .budget import NOT_EVALUATED, evaluation_cost, evaluation_worst_case, reserve_or_wait, settle
from .jobs import EVALUATION
from .models import Evaluation, EvaluationStatus
from .scoring import Score
from .structured import answer_check

logger = logging.getLogger(__name__)

FIELDS = [
    "status",
    "score",
    "scale_score",
    "reason",
    "inputs_note",
    "category",
    "schema_valid",
    "schema_errors",
    "judge_calls",
    "input_tokens",
    "output_tokens",
    "estimated_input_tokens",
    "cost",
    "latency_ms",
    "finished_at",
]


@dataclass
class _Job:
    evaluation: Evaluation
    request: str  # the prompt the answer was written for
    response: str  # the answer as the judge sees it
    columns: dict  # the row's values, for a classification's input columns
    reference: str = ""  # the dataset row's `reference` answer, shown to the judge for comparison (rounds_as_rows)
    images: list[dict] = field(default_factory=list)  # the request's images the judge is shown (Scorer.request_images)
    inputs_note: str = ""  # what of the request the judge was not shown (its images)


def experiment_round_evaluate(*, round_id: int) -> int:
    """Evaluate the answers of a finished round not yet taken by anyone; returns how many this call took."""
    claimed = _claim(round_id)
    if not claimed:
        return 0
    experiment = claimed[0].experiment
    config = experiment.config
    now = timezone.now()
    jobs = []
    for evaluation in claimed:
        evaluation.finished_at = now
        if experiment.stopped_reason:
            evaluation.status, evaluation.reason = EvaluationStatus.SKIPPED, NOT_EVALUATED
        elif evaluation.output.status != OutputStatus.OK:
            evaluation.status, evaluation.reason = EvaluationStatus.SKIPPED, _no_answer(evaluation.output)
        elif evaluation.output.is_cut_off:
            evaluation.status, evaluation.reason = EvaluationStatus.SKIPPED, evaluation.output.judge_skip_reason()
        else:
            jobs.append(_prepare(evaluation, config))
    if jobs and config.get("evaluation"):
        _judge(jobs, experiment)
    Evaluation.objects.bulk_update(claimed, FIELDS)
    experiment_announce(experiment.pk)
    return len(claimed)


def rounds_evaluating(*, round_ids: list[int]) -> list[int]:
    """Those of these finished rounds with evaluations still queued, in one query (most experiments have none)."""
    queued = Evaluation.objects.filter(output__round_id__in=round_ids, status=EvaluationStatus.QUEUED).exclude(
        output__round__status__in=ROUND_UNFINISHED
    )
    return sorted(set(queued.values_list("output__round_id", flat=True)))


def _claim(round_id: int) -> list[Evaluation]:
    """The round's queued evaluations, claimed one by one, once the round has finished; a round with nothing to
    evaluate (an experiment without a judge or a schema has no evaluations) costs this one query."""
    queued = Evaluation.objects.filter(output__round_id=round_id, status=EvaluationStatus.QUEUED).exclude(
        output__round__status__in=ROUND_UNFINISHED
    )
    pks = list(queued.values_list("pk", flat=True))
    if not pks:
        return []
    job, deadline = kind(EVALUATION), job_deadline(job_time_limit_s())
    mine = [pk for pk in pks if job_claim(job, pk, deadline=deadline)]
    return list(
        Evaluation.objects.filter(pk__in=mine)
        .select_related("experiment__group__workspace", "output__round")
        .order_by("output__variant__position")
    )


def _no_answer(output: Output) -> str:
    detail = f": {output.error}" if output.error else ""
    return f"No complete answer to evaluate (the answer {output.get_status_display().lower()}{detail})."


def _prepare(evaluation: Evaluation, config: dict[str, Any]) -> _Job:
    """The schema check, and what the judge will see; without a judge the evaluation is done here."""
    output = evaluation.output
    shown = output.text
    structured = config.get("structured-output")
    if structured:
        checked = answer_check(output.text, schema=structured["schema"], format=structured["format"])
        evaluation.schema_valid, evaluation.schema_errors, shown = checked.valid, checked.errors, checked.shown
    if not config.get("evaluation"):
        evaluation.status = EvaluationStatus.DONE
    columns = {**(output.round.variables or {})}
    return _Job(
        evaluation=evaluation,
        request=output.judge_request(),
        response=shown,
        columns=columns,
        reference=round_reference(output.round),
    )


def _judge(jobs: list[_Job], experiment) -> None:
    spec = experiment.config["evaluation"]
    judging = scorer()
    try:
        if judging is None:
            raise ValidationError("This installation has no judge (the judging app) any more.")
        judge = judging.prepare(
            workspace=experiment.group.workspace,
            model_id=spec["model"],
            type=spec["type"],
            prompt=spec.get("prompt", ""),
            classification=spec,
        )
    except ValidationError as exc:
        for job in jobs:
            job.evaluation.status, job.evaluation.reason = EvaluationStatus.FAILED, " ".join(exc.messages)
        return
    for job in jobs:
        job.images, job.inputs_note = judging.request_images(
            judge, job.evaluation.output, workspace_id=experiment.group.workspace_id
        )
    engine = runtime()
    limit_s = job_time_limit_s()
    budget = _Budget.of(experiment, judging, judge, spec["model"])
    try:
        results = engine.run(_score_all(judging, judge, jobs, engine, budget), timeout=limit_s)
    except RunTimedOut:
        for job in jobs:
            job.evaluation.status = EvaluationStatus.FAILED
            job.evaluation.reason = f"Judging ran past its time limit ({limit_s:g} s)."
        return
    for job, (score, latency_ms) in zip(jobs, results, strict=True):
        evaluation = job.evaluation
        if score is None:  # the budget had no room for it
            evaluation.status, evaluation.reason = EvaluationStatus.SKIPPED, NOT_EVALUATED
            continue
        evaluation.estimated_input_tokens = judging.input_tokens(
            judge, request=job.request, response=job.response, reference=job.reference
        )
        evaluation.latency_ms = latency_ms
        evaluation.score, evaluation.scale_score, evaluation.reason = score.score, score.scale_score, score.reason
        evaluation.category = score.category
        evaluation.inputs_note = job.inputs_note
        evaluation.judge_calls, evaluation.cost = score.calls, score.cost
        evaluation.input_tokens, evaluation.output_tokens = score.input_tokens, score.output_tokens
        judged = score.score is not None or score.category
        evaluation.status = EvaluationStatus.DONE if judged else EvaluationStatus.FAILED


@dataclass(frozen=True)
class _Budget:
    """A budgeted experiment's judge calls: each evaluation reserves its worst case (compare.experiments.budget)."""

    experiment_id: int
    judging: Any
    judge: Any
    info: Any  # the judge model's catalog entry

    @classmethod
    def of(cls, experiment, judging, judge, model_id: str) -> _Budget | None:
        if experiment.budget is None:
            return None
        _, info = model_info_for(experiment.group.workspace, model_id)
        return cls(experiment.pk, judging, judge, info)

    def worst_case(self, job: _Job):
        estimate = self.judging.input_tokens(
            self.judge, request=job.request, response=job.response, reference=job.reference
        )
        return evaluation_worst_case(input_tokens_estimate=estimate, info=self.info)


async def _score_all(
    judging, judge, jobs: list[_Job], engine: Runtime, budget: _Budget | None = None
) -> list[tuple[Score | None, int]]:
    async def one(job: _Job) -> tuple[Score | None, int]:
        if budget is None:
            return await scored(job)
        reserved = budget.worst_case(job)
        if reserved is None or not await reserve_or_wait(budget.experiment_id, reserved):
            return None, 0
        score, latency_ms = await scored(job)
        await settle(budget.experiment_id, reserved, evaluation_cost(score.cost, score.calls, reserved))
        return score, latency_ms

    async def scored(job: _Job) -> tuple[Score, int]:
        started = time.monotonic()
        try:
            score = await judging.score(
                judge,
                request=job.request,
                response=job.response,
                reference=job.reference,
                http=engine.client,
                limiter=engine.limiter,
                columns=job.columns,
                images=job.images,
            )
        except Exception as exc:
            # One answer's judging failing must not lose the others' scores; the reason is shown on its row.
            logger.exception("Judging evaluation %s failed unexpectedly", job.evaluation.pk)
            score = Score(score=None, scale_score=None, reason=f"Unexpected error: {type(exc).__name__}: {exc}")
        return score, int((time.monotonic() - started) * 1000)

    return list(await asyncio.gather(*(one(job) for job in jobs)))
