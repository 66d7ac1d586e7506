"""An experiment's progress counts: answers, then evaluations, which are only asked for when the run has them."""

import pytest

from compare.experiments.config import config_read
from compare.experiments.files import UploadedFiles
from compare.experiments.selectors import experiment_progress
from compare.experiments.services import experiment_create, experiment_start

pytestmark = pytest.mark.django_db

UNJUDGED = """
name: Unjudged
models: [{model: "cands:fake?tokens=5"}]
prompts: [{name: p1, prompt: "Say <<x>>."}, {name: p2, prompt: "Shout <<x>>."}]
dataset: [{vars: {x: one}}, {vars: {x: two}}, {vars: {x: three}}]
"""


def started(workspace, owner, text: str):
    experiment = experiment_create(
        workspace=workspace, user=owner, config=config_read(text, source="test.yaml", files=UploadedFiles({}))
    )
    experiment_start(experiment=experiment, user=owner, run_here=True)
    return experiment


def test_a_run_without_evaluations_counts_its_answers_in_one_query(
    workspace, owner, connections, django_assert_num_queries
):
    experiment = started(workspace, owner, UNJUDGED)
    assert not experiment.evaluates

    with django_assert_num_queries(1):
        progress = experiment_progress(experiment)

    assert (progress["done"], progress["total"], progress["answers_total"]) == (0, 6, 6)
    assert (progress["evaluations_total"], progress["spent"], progress["finished"]) == (0, 0.0, False)


def test_a_judged_run_counts_its_evaluations_too(workspace, owner, connections, django_assert_num_queries):
    judged = UNJUDGED + "evaluation: {type: 1-5, model: judge:fake}\n"
    experiment = started(workspace, owner, judged)
    assert experiment.evaluates

    with django_assert_num_queries(2):
        progress = experiment_progress(experiment)

    assert (progress["answers_total"], progress["evaluations_total"], progress["total"]) == (6, 6, 12)
