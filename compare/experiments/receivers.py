"""Experiments' answer to compare's round_finished: evaluate the round's answers (the budget is held call by
call, compare.experiments.budget)."""

from django.db.models import Exists, OuterRef
from django.utils import timezone

from lab.jobs.enqueue import enqueue_on_commit
from lab.jobs.kinds import Lane

from .jobs import EVALUATION
from .models import Evaluation, EvaluationStatus, Experiment


def on_round_finished(sender, round_ids: list[int], lanes: dict[int, str] | None = None, **kwargs) -> None:
    """Runs inside the finishing transaction: only enqueue and check once it commits (the rounds are then done)."""
    # An experiment's rounds are batch work (compare.rounds.start.round_start): an interactive round, which a worker
    # finishes on its own while a person waits for `round.done`, needs no query here.
    round_ids = [pk for pk in round_ids if (lanes or {}).get(pk, Lane.BATCH) == Lane.BATCH]
    if not round_ids:
        return
    waiting = Evaluation.objects.filter(output__round_id=OuterRef("group__rounds"), status=EvaluationStatus.QUEUED)
    found = (
        Experiment.objects.filter(group__rounds__in=round_ids)
        .annotate(evaluating=Exists(waiting))
        .values_list("group__rounds", "evaluating")
    )
    evaluating = [round_id for round_id, has_evaluations in found if has_evaluations]
    # An experiment without a judge or a schema has no evaluations: its rounds are finished with the one query.
    if not evaluating:
        return
    queued = Evaluation.objects.filter(output__round_id__in=evaluating, status=EvaluationStatus.QUEUED)
    queued.update(enqueued_at=timezone.now())
    for round_id in sorted(evaluating):
        enqueue_on_commit(EVALUATION, round_id)
