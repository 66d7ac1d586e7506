"""Telling an experiment's page where the run stands."""

from __future__ import annotations

from lab.events import PROGRESS, ExperimentFigures, progress
from lab.realtime import broadcast, group_channel

from .models import Experiment
from .selectors import experiment_progress


def experiment_announce(experiment_id: int) -> None:
    """A `progress` event with the run's counts on the experiment's channel."""
    experiment = Experiment.objects.filter(pk=experiment_id).first()
    if experiment is None:
        return
    figures = experiment_progress(experiment)
    own = ExperimentFigures(
        experiment=experiment.pk,
        answers_done=figures["answers_done"],
        answers_total=figures["answers_total"],
        evaluations_done=figures["evaluations_done"],
        evaluations_total=figures["evaluations_total"],
        spent=figures["spent"],
        unpriced_calls=figures["unpriced_calls"],
        stopped=figures["stopped"],
        finished=figures["finished"],
    )
    payload = progress(run=figures["run"], done=figures["done"], total=figures["total"], experiment=own)
    broadcast(group_channel(experiment.group_id), PROGRESS, **payload)
