"""Compare's job kind: a round (claimed and run by `compare.run_round`), registered with lab.jobs at start-up."""

from __future__ import annotations

from lab.jobs.kinds import JobKind, register

from ..models import Round
from .worker import ROUND_WORKER_STOPPED, WORKER_STOPPED, round_answers_requeue, round_fail

ROUND = "round"


def _fail(pk: int, error: str) -> bool:
    # A dead worker's answers say so themselves; any other reason is the round's and its answers' alike.
    return round_fail(round_id=pk, error=error, output_error=WORKER_STOPPED if error == ROUND_WORKER_STOPPED else None)


def round_lane(pk: int) -> str:
    """The lane of a round's messages (and of its task's work: see dispatch.round_dispatch)."""
    return Round.objects.filter(pk=pk).values_list("lane", flat=True).first() or "interactive"


def register_kinds() -> None:
    register(
        JobKind(
            name=ROUND,
            model=Round,
            task="compare.run_round",
            fail=_fail,
            lane_of=round_lane,
            worker_stopped=ROUND_WORKER_STOPPED,
            noun="round",
            queued_since="created_at",
            on_reclaim=round_answers_requeue,
        )
    )
