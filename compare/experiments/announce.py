"""Telling an experiment's page where the run stands."""

from __future__ import annotations

from lab.events import PROGRESS
from lab.realtime import broadcast, group_channel

from .models import Experiment
from .selectors import experiment_progress


def experiment_announce(experiment_id: int) -> None:
    """A `progress` event with the run's counts on the experiment's channel."""
    experiment = Experiment.objects.filter(pk=experiment_id).first()
    if experiment is None:
        return
    progress = experiment_progress(experiment)
    broadcast(group_channel(experiment.group_id), PROGRESS, experiment=experiment.pk, **progress)
