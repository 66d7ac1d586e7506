"""Judging's job kinds, registered with lab.jobs at start-up: a verdict (claimed and run by `judging.judge_verdict`)
and the grading of an answer's model-graded assertions (`judging.grade_assertions`).

Both go in their round's lane: the verdict of a round someone just started is interactive work.
"""

from __future__ import annotations

from lab.jobs.kinds import JobKind, Lane, register

from .assertion_grading import assertion_grading_fail
from .models import ASSERTION_GRADING_JOB, VERDICT_JOB, AssertionGrading, Verdict
from .verdicts import verdict_fail_by_id

WORKER_STOPPED = "The worker stopped before this verdict finished; judge the round again."
GRADING_STOPPED = "The worker stopped before the grader finished; re-run the assertions."


def _grading_lane(pk: int) -> str:
    found = AssertionGrading.objects.filter(pk=pk).values_list("output__round__lane", flat=True).first()
    return found or Lane.INTERACTIVE


def _lane(pk: int) -> str:
    return Verdict.objects.filter(pk=pk).values_list("round__lane", flat=True).first() or Lane.INTERACTIVE


def register_kinds() -> None:
    register(
        JobKind(
            name=VERDICT_JOB,
            model=Verdict,
            task="judging.judge_verdict",
            fail=lambda pk, error: verdict_fail_by_id(verdict_id=pk, error=error),
            lane_of=_lane,
            worker_stopped=WORKER_STOPPED,
            noun="verdict",
            queued_since="requested_at",
        )
    )
    register(
        JobKind(
            name=ASSERTION_GRADING_JOB,
            model=AssertionGrading,
            task="judging.grade_assertions",
            fail=lambda pk, error: assertion_grading_fail(grading_id=pk, error=error),
            lane_of=_grading_lane,
            worker_stopped=GRADING_STOPPED,
            noun="assertion grading",
        )
    )
