"""SIGKILL of the worker in the middle of a verdict and of an evaluation: the jobs sweeper fails each with a readable
reason once its deadline (the time limit plus the grace) has passed, so nothing stays running."""

import time

import pytest
from django.db import transaction
from django.utils import timezone

from compare.experiments.config import config_read
from compare.experiments.files import DirectoryFiles
from compare.experiments.jobs import EVALUATION
from compare.experiments.jobs import WORKER_STOPPED as EVALUATION_STOPPED
from compare.experiments.models import Evaluation, EvaluationStatus
from compare.experiments.services import experiment_create, experiment_start
from compare.models import Output, OutputStatus, Round, RoundStatus
from compare.tasks import evaluate_experiment_round
from judging.jobs import WORKER_STOPPED as VERDICT_STOPPED
from judging.models import VERDICT_JOB, Verdict, VerdictStatus
from judging.tasks import judge_verdict
from lab.jobs.kinds import kind
from lab.jobs.lifecycle import job_sweep
from tests.fixtures.judging_factories import answered_round, judged_group, make_judge
from tests.fixtures.processes import start_worker

pytestmark = pytest.mark.services

TIME_LIMIT_S, GRACE_S = 3, 1
SLOW = {"ttft_ms": 30_000}  # a judge that is still thinking when the worker dies


def doomed_worker(tmp_path):
    # Its own queue, so no other worker can take the job; solo pool, so the kill stops the judging too.
    return start_worker(
        tmp_path,
        "--pool=solo",
        "-Q",
        "doomed",
        name="doomed",
        CELERY_TASK_SOFT_TIME_LIMIT=str(TIME_LIMIT_S),
        JOBS_GRACE_S=str(GRACE_S),
    )


def until(condition, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.1)
    return condition()


def swept_until_finished(name: str, row, timeout: float) -> None:
    """Sweep as beat would (the same function its task calls), twice a second, until the row has finished."""

    def finished() -> bool:
        job_sweep(kind(name))
        row.refresh_from_db()
        return row.status not in ("queued", "running")

    assert until(finished, timeout), f"{name} {row.pk} is still {row.status}"


def test_a_verdict_whose_worker_is_killed_fails_readably_within_its_bound(
    transactional_db, workspace, owner, connections, fake_llm, tmp_path
):
    judge, _ = make_judge(workspace, owner, fake_llm, scenario=fake_llm.model(**SLOW))
    with transaction.atomic():  # committed finished, so no worker of the session ever runs the round
        round_ = answered_round(judged_group(workspace, owner, count=2), owner, ["one", "two"])
    verdict = Verdict.objects.create(
        round=round_, judge=judge, judge_name=judge.name, judge_model=judge.model, scale=judge.scale, mode=judge.mode
    )
    worker = doomed_worker(tmp_path)
    try:
        judge_verdict.apply_async((verdict.pk,), queue="doomed")
        assert until(lambda: Verdict.objects.filter(pk=verdict.pk, status=VerdictStatus.RUNNING).exists(), 15)
        time.sleep(0.3)
        worker.proc.kill()  # SIGKILL: no cleanup of any kind
    finally:
        worker.stop()
    verdict.refresh_from_db()
    assert verdict.status == VerdictStatus.RUNNING  # within its deadline, nobody touches it
    bound = (verdict.deadline - timezone.now()).total_seconds()
    assert bound <= TIME_LIMIT_S + GRACE_S

    swept_until_finished(VERDICT_JOB, verdict, timeout=bound + 5)

    assert (verdict.status, verdict.error) == (VerdictStatus.FAILED, VERDICT_STOPPED)
    assert 0 <= (verdict.finished_at - verdict.deadline).total_seconds() <= 1


def test_an_evaluation_whose_worker_is_killed_fails_readably_within_its_bound(
    transactional_db, workspace, owner, connections, fake_llm, tmp_path
):
    config = config_read(
        f"""
name: Killed while judged
evaluation:
  type: 1-5
  model: judge:{fake_llm.model(**SLOW)}
models:
  - model: cands:fake?tokens=5
prompts:
  - name: greet
    prompt: Greet <<person>>.
dataset:
  - vars:
      person: Ada
""",
        source="killed.yaml",
        files=DirectoryFiles(tmp_path),
    )
    experiment = experiment_create(workspace=workspace, user=owner, config=config)
    with transaction.atomic():  # the round is answered before anything is committed, so no worker runs it
        [round_] = experiment_start(experiment=experiment, user=owner)
        Output.objects.filter(round=round_).update(status=OutputStatus.OK, text="Hello Ada.", rendered_prompt="Hi")
        now = timezone.now()
        Round.objects.filter(pk=round_.pk).update(
            status=RoundStatus.DONE, started_at=now, finished_at=now, deadline=now
        )
    [evaluation] = Evaluation.objects.filter(experiment=experiment)
    worker = doomed_worker(tmp_path)
    try:
        evaluate_experiment_round.apply_async((round_.pk,), queue="doomed")
        assert until(lambda: Evaluation.objects.filter(pk=evaluation.pk, status=EvaluationStatus.RUNNING).exists(), 15)
        time.sleep(0.3)
        worker.proc.kill()
    finally:
        worker.stop()
    evaluation.refresh_from_db()
    assert evaluation.status == EvaluationStatus.RUNNING
    bound = (evaluation.deadline - timezone.now()).total_seconds()
    assert bound <= TIME_LIMIT_S + GRACE_S

    swept_until_finished(EVALUATION, evaluation, timeout=bound + 5)

    assert (evaluation.status, evaluation.reason) == (EvaluationStatus.FAILED, EVALUATION_STOPPED)
    assert 0 <= (evaluation.finished_at - evaluation.deadline).total_seconds() <= 1
