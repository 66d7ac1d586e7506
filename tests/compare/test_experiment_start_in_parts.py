"""A run started in parts (compare.experiments.services.experiment_start_in_parts): the command line commits the
first rounds, sends their calls, and writes the others meanwhile. Until they are written the experiment has not
started (no run, nothing finished, a second start refused); the run then holds every row once, in order, each
answer evaluated."""

import threading

import pytest
from django.core.exceptions import ValidationError
from django.db import connections, transaction

from compare.experiments.config import config_read
from compare.experiments.files import DirectoryFiles
from compare.experiments.models import Evaluation, EvaluationStatus, Experiment
from compare.experiments.runner import experiment_run_here, rounds_at_start, run_plan
from compare.experiments.selectors import experiment_progress
from compare.experiments.services import experiment_create, experiment_start, experiment_start_in_parts
from compare.models import CompareGroup, Output, OutputStatus, Round
from lab.services import connection_create

pytestmark = pytest.mark.django_db(transaction=True)

ROWS = 30
LIMIT = 2
# A schema makes every answer evaluated (Experiment.evaluates) without a judge's calls.
KEY = "sk-test-start-in-parts-0123"
SCHEMA = "structured-output: {mode: validate, schema: {type: object}}\n"


def experiment_of(
    workspace, owner, tmp_path, model: str, rows: int = ROWS, *, connection: str = "narrow", values: dict | None = None
) -> Experiment:
    values = {i: str(i) for i in range(1, rows + 1)} | (values or {})
    dataset = "\n".join(f"  - {{name: r{i}, vars: {{n: '{values[i]}'}}}}" for i in range(1, rows + 1))
    path = tmp_path / "experiment.yaml"
    path.write_text(
        f"models: [{{model: '{connection}:{model}'}}]\nprompts: {{one: 'One <<n>>.', two: 'Two <<n>>.'}}\n"
        f"{SCHEMA}dataset:\n{dataset}\n"
    )
    config = config_read(path.read_text(), source=path.name, files=DirectoryFiles(tmp_path))
    return experiment_create(workspace=workspace, user=owner, config=config)


@pytest.fixture
def narrow(workspace, fake_llm):
    return connection_create(
        workspace=workspace,
        name="narrow",
        kind="openai_compatible",
        base_url=fake_llm.openai_url,
        max_concurrency=LIMIT,
    )


def test_until_the_rest_is_written_the_experiment_has_not_started(workspace, owner, fake_llm, narrow, tmp_path):
    experiment = experiment_of(workspace, owner, tmp_path, fake_llm.model(tokens=2))

    parts = experiment_start_in_parts(experiment=experiment, user=owner, first=4)

    assert [r.number for r in parts.rounds] == [1, 2, 3, 4]
    run = parts.rounds[0].run_id
    stored = Experiment.objects.get(pk=experiment.pk)
    assert (stored.run_id, stored.starting_run_id) == (None, run)
    progress = experiment_progress(stored)
    assert (progress["run"], progress["finished"], progress["total"]) == (None, False, 0)
    for start in (
        lambda: experiment_start(experiment=stored, user=owner, run_here=True),
        lambda: experiment_start_in_parts(experiment=stored, user=owner, first=4),
    ):
        with pytest.raises(ValidationError, match="already run"):
            start()

    rest = parts.rest()

    assert [r.number for r in rest] == list(range(5, ROWS + 1)) and {r.run_id for r in rest} == {run}
    stored.refresh_from_db()
    assert stored.run_id == run
    rounds = Round.objects.filter(group=experiment.group, run_id=run).order_by("number")
    assert [r.dataset_row.name for r in rounds.select_related("dataset_row")] == [f"r{i}" for i in range(1, ROWS + 1)]
    outputs = Output.objects.filter(round__group=experiment.group)
    assert outputs.count() == 2 * ROWS == Evaluation.objects.filter(experiment=experiment).count()
    assert experiment_progress(stored)["answers_total"] == 2 * ROWS


def test_a_row_past_the_first_part_that_cannot_be_sent_stops_the_run_before_anything_is_written(
    workspace, owner, fake_llm, tmp_path
):
    connection_create(workspace=workspace, name="or", kind="openrouter", base_url=fake_llm.openai_url, api_key=KEY)
    model = fake_llm.model(name="fake-free")  # a context of 8,192 tokens
    too_long = {25: "word " * 8000}
    experiment = experiment_of(workspace, owner, tmp_path, model, connection="or", values=too_long)

    with pytest.raises(ValidationError, match=r"Row 25 \(r25\): .*more than the context of or::fake-free"):
        experiment_start_in_parts(experiment=experiment, user=owner, first=4)

    assert not Round.objects.filter(group=experiment.group).exists()
    stored = Experiment.objects.get(pk=experiment.pk)
    assert (stored.run_id, stored.starting_run_id) == (None, None)
    assert fake_llm.scenario(model)["requests"] == 0


def test_a_run_started_in_parts_runs_every_row_once_and_its_first_calls_do_not_wait_for_the_rest(
    workspace, owner, fake_llm, narrow, tmp_path
):
    model = fake_llm.model(tokens=2, ttft_ms=50)
    experiment = experiment_of(workspace, owner, tmp_path, model)
    first = rounds_at_start(run_plan(experiment, None))
    assert first < ROWS  # the rest holds rows
    parts = experiment_start_in_parts(experiment=experiment, user=owner, first=first)
    # The rest cannot be written while another transaction holds the comparison's row (round_start numbers rounds
    # under its lock): the first calls must reach the server all the same.
    held, calls_while_held = threading.Event(), []

    def hold_the_group() -> None:
        try:
            with transaction.atomic():
                CompareGroup.objects.select_for_update().get(pk=experiment.group_id)
                held.set()
                counters = fake_llm.wait_for(model, lambda s: s["requests"] >= LIMIT, timeout=10)
                calls_while_held.append(counters["requests"])
        finally:
            connections.close_all()

    holder = threading.Thread(target=hold_the_group)
    holder.start()
    assert held.wait(10)
    experiment_run_here(experiment=experiment, concurrency=None, on_progress=lambda progress: None, parts=parts)
    holder.join()

    assert calls_while_held[0] >= LIMIT, "the first calls waited for the rest to be written"
    experiment.refresh_from_db()
    assert experiment_progress(experiment)["finished"]
    outputs = Output.objects.filter(round__group=experiment.group)
    assert outputs.count() == 2 * ROWS and {o.status for o in outputs} == {OutputStatus.OK}
    assert {e.status for e in Evaluation.objects.filter(experiment=experiment)} == {EvaluationStatus.DONE}
    rounds = Round.objects.filter(group=experiment.group)
    assert sorted(rounds.values_list("number", flat=True)) == list(range(1, ROWS + 1))
    assert {r.run_id for r in rounds} == {experiment.run_id}
    assert fake_llm.scenario(model)["max_in_flight"] == LIMIT


def test_a_run_in_parts_is_refused_over_several_processes(workspace, owner, fake_llm, narrow, tmp_path):
    experiment = experiment_of(workspace, owner, tmp_path, fake_llm.model(tokens=2), rows=3)
    parts = experiment_start_in_parts(experiment=experiment, user=owner, first=2)
    with pytest.raises(ValueError, match="one process"):
        experiment_run_here(experiment=experiment, concurrency=None, on_progress=print, processes=2, parts=parts)


def test_an_experiment_without_rows_started_in_parts_has_its_one_round(workspace, owner, fake_llm, narrow, tmp_path):
    path = tmp_path / "one.yaml"
    path.write_text(f"models: [{{model: 'narrow:{fake_llm.model(tokens=2)}'}}]\nprompts: {{ask: Say hi.}}\n")
    config = config_read(path.read_text(), source=path.name, files=DirectoryFiles(tmp_path))
    experiment = experiment_create(workspace=workspace, user=owner, config=config)

    parts = experiment_start_in_parts(experiment=experiment, user=owner, first=9)

    assert len(parts.rounds) == 1 and parts.rest() == []
    assert Round.objects.filter(group=experiment.group).count() == 1
    assert Experiment.objects.get(pk=experiment.pk).run_id == parts.rounds[0].run_id
