"""Judging's job kind: a verdict (claimed and run by `judging.judge_verdict`), registered with lab.jobs at start-up.

A verdict goes in its round's lane: the verdict of a round someone just started is interactive work.
"""

from __future__ import annotations

from lab.jobs.kinds import JobKind, Lane, register

from .models import VERDICT_JOB, Verdict
from .verdicts import verdict_fail_by_id

WORKER_STOPPED = "The worker stopped before this verdict finished; judge the round again."


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
