"""The worker's side of a verdict: claim it, judge the round's complete answers, record the result, announce it.

A verdict is a job of lab.jobs: claimed with a conditional UPDATE (queued → running) and a deadline, so a
redelivered message finds it taken and does nothing, and a dead worker's verdict is failed by the sweeper. It is
judged on the process's engine loop (lab.engine.runtime), whose HTTP client and connection scheduler it shares
with the rounds, and its time limit is enforced here, by the caller, whatever the worker's pool.

Answers that failed, timed out, were cancelled or cut off at the token limit are never judged as if they were
whole: they are listed as skipped and the round is judged on the others.
"""

from __future__ import annotations

import logging
import random
import secrets
from functools import partial

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from compare.datasets.round_rows import round_reference
from compare.models import Output
from lab.engine.runtime import Runtime, RunTimedOut, runtime
from lab.events import VERDICT_DONE, verdict_done
from lab.jobs.kinds import kind
from lab.jobs.lifecycle import job_claim, job_deadline, job_time_limit_s
from lab.realtime import broadcast, group_channel

from .calls import JudgeClient, JudgeModel, judge_model_resolve
from .classification_calls import classify_answers
from .conversation import judged_texts
from .images import judge_images, request_images
from .judgement import Candidate, Judgement, judge_answers
from .models import VERDICT_JOB, JudgeConfig, Verdict, VerdictOutput, VerdictStatus
from .rubric import Rubric

logger = logging.getLogger(__name__)


def skip_reason(output: Output) -> str:
    """Why an answer cannot be judged as a whole one, or "" when it can (compare's rule, shared by experiments)."""
    return output.judge_skip_reason()


def verdict_execute(*, verdict_id: int, seed: int | None = None) -> Verdict | None:
    """Claim, judge and record one verdict; None when it was not queued (claimed before, or re-requested)."""
    limit_s = job_time_limit_s()
    if not job_claim(kind(VERDICT_JOB), verdict_id, deadline=job_deadline(limit_s)):
        logger.info("Verdict %s is not queued any more; nothing to do.", verdict_id)
        return None
    verdict = Verdict.objects.select_related("round__group__workspace", "judge").get(pk=verdict_id)
    try:
        return _judge(verdict, seed, limit_s)
    except RunTimedOut:
        return verdict_fail(verdict=verdict, error=f"Judging ran past its time limit ({limit_s:g} s).")
    except Exception:
        verdict_fail(verdict=verdict, error="The worker hit an unexpected error while judging this round.")
        raise


def _judge(verdict: Verdict, seed: int | None, limit_s: float) -> Verdict:
    judge: JudgeConfig | None = verdict.judge
    if judge is None:
        return verdict_fail(verdict=verdict, error="The judge configuration was deleted.")
    try:
        judge_model = judge_model_resolve(workspace=verdict.round.group.workspace, model_id=judge.model)
        rubric = judge.rubric()
    except ValidationError as exc:
        return verdict_fail(verdict=verdict, error=" ".join(exc.messages))
    outputs = list(verdict.round.outputs.select_related("variant").order_by("variant__position"))
    skipped = {output.pk: reason for output in outputs if (reason := skip_reason(output))}
    reference = round_reference(verdict.round)
    turn = verdict.round.turn
    candidates = [
        Candidate(output.pk, *judged_texts(output, turn=turn, scope=judge.conversation), reference)
        for output in outputs
        if output.pk not in skipped
    ]
    if not candidates:
        return verdict_fail(verdict=verdict, error="No complete answer to judge.", skipped=skipped)
    workspace_id = verdict.round.group.workspace_id
    images, note = judge_images(judge_model, request_images(outputs, workspace_id=workspace_id))
    seed = next(value for value in (seed, judge.seed, secrets.randbits(62)) if value is not None)
    # The round is part of the stream's seed, so a judge with a fixed seed still letters each round differently.
    rng = random.Random(f"{seed}:{verdict.round_id}")
    engine = runtime()
    if judge.classifies:
        return _classify(verdict, judge, judge_model, candidates, rng, seed, skipped, engine, limit_s)
    judged = _run(judge_model, rubric, judge.mode, candidates, rng, engine, verdict.round.lane, images)
    judgement, client = engine.run(judged, timeout=limit_s)
    return verdict_record(
        verdict=verdict, judgement=judgement, client=client, seed=seed, skipped=skipped, inputs_note=note
    )


def _classify(verdict, judge, judge_model, candidates, rng, seed, skipped, engine: Runtime, limit_s: float) -> Verdict:
    try:
        classifier = judge.classifier()
        columns = round_columns(verdict.round, classifier.input_columns)
    except ValidationError as exc:
        return verdict_fail(verdict=verdict, error=" ".join(exc.messages), skipped=skipped)
    judged = _run_classification(judge_model, classifier, candidates, columns, rng, engine, verdict.round.lane)
    judgement, client = engine.run(judged, timeout=limit_s)
    return verdict_record(verdict=verdict, judgement=judgement, client=client, seed=seed, skipped=skipped)


def round_columns(round_, names) -> dict:
    """The dataset columns a classification judge is shown: the round's variables as run (shared ones and its
    dataset row's); a column the round lacks is an error naming it."""
    values = {**(round_.variables or {}), **(round_.dataset_row.vars if round_.dataset_row else {})}
    missing = [name for name in names if name not in values]
    if missing:
        raise ValidationError(f"This round has no column {', '.join(missing)} for the judge (its input_columns).")
    return {name: values[name] for name in names}


async def _run_classification(judge_model, classifier, candidates, columns, rng, engine: Runtime, lane: str):
    client = JudgeClient(judge_model, client=engine.client, limiter=engine.limiter, lane=lane)
    judgement = await classify_answers(
        client=client, classifier=classifier, candidates=candidates, columns=columns, rng=rng
    )
    return judgement, client


async def _run(
    judge_model: JudgeModel,
    rubric: Rubric,
    mode: str,
    candidates: list[Candidate],
    rng: random.Random,
    engine: Runtime,
    lane: str,
    images: list[dict] | None = None,
) -> tuple[Judgement, JudgeClient]:
    client = JudgeClient(judge_model, client=engine.client, limiter=engine.limiter, lane=lane, images=images)
    judgement = await judge_answers(client=client, rubric=rubric, mode=mode, candidates=candidates, rng=rng)
    return judgement, client


@transaction.atomic
def verdict_record(
    *,
    verdict: Verdict,
    judgement: Judgement,
    client: JudgeClient,
    seed: int,
    skipped: dict[int, str],
    inputs_note: str = "",
) -> Verdict:
    """Store a judgement: one row per answer (judged or skipped), the verdict's figures, then announce it.
    `inputs_note` says what of the request the judge could not be shown (its images, judging/images.py)."""
    letter_of = {output_id: letter for letter, output_id in judgement.letters.items()}
    ranked = sorted(judgement.totals, key=lambda output: -judgement.totals[output])
    VerdictOutput.objects.bulk_create(
        [
            VerdictOutput(
                verdict=verdict,
                output_id=output_id,
                letter=letter_of[output_id],
                score=judgement.totals.get(output_id),
                scores={
                    name: {"raw": score.raw, "scaled": score.scaled, "reason": score.reason}
                    for name, score in judgement.scores.get(output_id, {}).items()
                },
                rank=ranked.index(output_id) + 1 if output_id in ranked else None,
                category=judgement.categories.get(output_id, ""),
            )
            for output_id in judgement.letters.values()
        ]
        + [
            VerdictOutput(verdict=verdict, output_id=output_id, judged=False, skip_reason=reason[:200])
            for output_id, reason in skipped.items()
        ]
    )
    ledger = client.ledger
    status = VerdictStatus.FAILED if judgement.error else VerdictStatus.DONE
    fields = {
        "winner_id": judgement.winner,
        "tie": judgement.tie,
        "decided_by": judgement.decided_by,
        "seed": seed,
        "letters": judgement.letters,
        "weights": judgement.weights,
        "missing_metrics": judgement.missing,
        "skipped": [{"output": output_id, "reason": reason} for output_id, reason in skipped.items()],
        "pairs": judgement.pairs,
        "calls": ledger.log,
        "judge_calls": ledger.calls,
        "input_tokens": ledger.input_tokens,
        "output_tokens": ledger.output_tokens,
        "cost": ledger.cost,
        "error": judgement.error,
        "inputs_note": inputs_note,
        "finished_at": timezone.now(),
    }
    if not Verdict.objects.transition(verdict.pk, status, **fields):
        # Someone re-requested it meanwhile: their judgement replaces this one.
        transaction.set_rollback(True)
        return verdict
    verdict.refresh_from_db()
    transaction.on_commit(partial(announce, verdict))
    return verdict


def verdict_fail(*, verdict: Verdict, error: str, skipped: dict[int, str] | None = None) -> Verdict:
    if verdict_fail_by_id(verdict_id=verdict.pk, error=error, skipped=skipped):
        verdict.refresh_from_db()
    return verdict


@transaction.atomic
def verdict_fail_by_id(*, verdict_id: int, error: str, skipped: dict[int, str] | None = None) -> bool:
    """Fail an unfinished verdict with a readable error and announce it; False when it had finished."""
    fields = {"error": error, "finished_at": timezone.now()}
    if skipped:
        fields["skipped"] = [{"output": output_id, "reason": reason} for output_id, reason in skipped.items()]
    if not Verdict.objects.transition(verdict_id, VerdictStatus.FAILED, **fields):
        return False
    logger.warning("Verdict %s failed: %s", verdict_id, error)
    transaction.on_commit(partial(announce, Verdict.objects.select_related("round").get(pk=verdict_id)))
    return True


def announce(verdict: Verdict) -> None:
    """`verdict.done` on the comparison's channel: ids and figures only; pages fetch the panel to show it."""
    broadcast(
        group_channel(verdict.round.group_id),
        VERDICT_DONE,
        **verdict_done(
            round=verdict.round_id,
            verdict=verdict.pk,
            status=verdict.status,
            winner=verdict.winner_id,
            tie=verdict.tie,
            error=verdict.error,
        ),
    )
