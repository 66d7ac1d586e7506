"""Experiments' job kind: the evaluations of one finished round, sent (by round) to `compare.evaluate_experiment_round`.

Evaluations are batch work. Each row is claimed on its own, so the sweeper fails the rows a dead worker held one
by one, and re-sends a round's message while any of its evaluations is still queued.
"""

from __future__ import annotations

from django.utils import timezone

from lab.jobs.kinds import JobKind, Lane, register

from .announce import experiment_announce
from .models import Evaluation, EvaluationStatus

EVALUATION = "evaluation"
WORKER_STOPPED = "The worker stopped before this answer was evaluated."


def evaluation_fail(pk: int, error: str) -> bool:
    """Fail one unfinished evaluation with a readable reason and update its experiment's page."""
    failed = Evaluation.objects.transition(pk, EvaluationStatus.FAILED, reason=error, finished_at=timezone.now())
    if failed:
        experiment_announce(Evaluation.objects.values_list("experiment_id", flat=True).get(pk=pk))
    return failed


def register_kinds() -> None:
    register(
        JobKind(
            name=EVALUATION,
            model=Evaluation,
            task="compare.evaluate_experiment_round",
            fail=evaluation_fail,
            lane_of=lambda round_id: Lane.BATCH,
            worker_stopped=WORKER_STOPPED,
            noun="evaluation",
            message_key="output__round_id",
        )
    )
