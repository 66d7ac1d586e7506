"""A comparison that names a judge gets each finished round judged automatically: compare sends round_finished,
judging enqueues its task once the round is committed, and the task judges it once, however often it runs."""

import time
from functools import partial

import pytest

from compare.models import Round, RoundStatus
from compare.rounds.start import round_start
from compare.rounds.worker import round_finish
from judging.models import VERDICT_JOB, Verdict, VerdictStatus
from judging.rubric import Metric
from judging.services import group_judge_set, verdict_for_finished_round
from judging.verdicts import verdict_execute
from lab.jobs.enqueue import send
from tests.fixtures.compare_factories import start_round
from tests.fixtures.judging_factories import CANDIDATES, answered_round, judged_group, make_judge
from tests.judging.scripts import relative

QUALITY = Metric("Quality", 1, "Poor.", "Excellent.")


def finish(round_: Round, capture) -> list:
    """compare's own finish of a running round; returns the on-commit callbacks it left."""
    Round.objects.filter(pk=round_.pk).update(status=RoundStatus.RUNNING, deadline=round_.created_at)
    with capture() as callbacks:
        round_finish(round_id=round_.pk)
    return callbacks


def judging_enqueued(callbacks, round_id: int) -> bool:
    verdict = Verdict.objects.filter(round_id=round_id).first()
    return verdict is not None and any(
        isinstance(c, partial) and c.func == send and c.args == (VERDICT_JOB, verdict.pk) for c in callbacks
    )


def test_a_round_of_a_comparison_with_a_judge_is_enqueued_for_judging_when_it_finishes(
    workspace, owner, fake_llm, connections, django_capture_on_commit_callbacks
):
    group = judged_group(workspace, owner, count=2)
    judge, _ = make_judge(workspace, owner, fake_llm)
    group_judge_set(group=group, judge=judge)

    callbacks = finish(answered_round(group, owner, ["one", "two"]), django_capture_on_commit_callbacks)

    assert judging_enqueued(callbacks, group.rounds.get().pk)
    assert Verdict.objects.get().status == VerdictStatus.QUEUED


def test_a_comparison_without_a_judge_is_left_alone(workspace, owner, connections, django_capture_on_commit_callbacks):
    group = judged_group(workspace, owner, count=2)

    callbacks = finish(start_round(group, owner), django_capture_on_commit_callbacks)

    assert callbacks and not Verdict.objects.exists()
    assert not any(getattr(c, "func", None) == send and c.args[0] == VERDICT_JOB for c in callbacks)


def test_the_automatic_task_judges_once_however_often_it_is_delivered(workspace, owner, fake_llm, connections):
    group = judged_group(workspace, owner, count=2)
    judge, scenario = make_judge(workspace, owner, fake_llm, metrics=[QUALITY.as_dict()])
    group_judge_set(group=group, judge=judge)
    round_ = answered_round(group, owner, ["alpha", "beta"])
    fake_llm.script(scenario, relative({"alpha": (5, "yes"), "beta": (1, "no")}))

    queued = verdict_for_finished_round(round_id=round_.pk)
    first = verdict_execute(verdict_id=queued.pk)
    again = verdict_execute(verdict_id=queued.pk)  # a redelivered message finds it taken
    assert again is None
    again = verdict_for_finished_round(round_id=round_.pk)  # and the round's finish, signalled again, adds none

    assert first.status == VerdictStatus.DONE and first.requested_by is None
    assert again.pk == first.pk and Verdict.objects.count() == 1
    assert len(fake_llm.requests(scenario)) == 1


@pytest.mark.services
def test_end_to_end_a_worker_runs_the_round_then_judges_it(
    transactional_db, owner, workspace, fake_llm, connections, celery_worker_process
):
    from compare import services as compare_services

    models = [f"{CANDIDATES}::{fake_llm.model(text=f'{word} says tea is good')}" for word in ("alpha", "beta")]
    group = compare_services.group_create(
        workspace=workspace,
        user=owner,
        mode="custom",
        variants=[{"label": f"V{i}", "model": model, "prompt": "About tea?"} for i, model in enumerate(models)],
    )
    judge, scenario = make_judge(workspace, owner, fake_llm, metrics=[QUALITY.as_dict()])
    group_judge_set(group=group, judge=judge)
    fake_llm.script(scenario, relative({"beta": (5, "yes"), "alpha": (2, "no")}))

    round_ = round_start(group=group, user=owner)[0]  # the worker runs it, then judges it
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not Verdict.objects.filter(round=round_, status=VerdictStatus.DONE).exists():
        time.sleep(0.2)

    verdict = Verdict.objects.get(round=round_)
    assert verdict.status == VerdictStatus.DONE, (verdict.status, verdict.error, celery_worker_process.output()[-3000:])
    assert verdict.winner.text == "beta says tea is good"
