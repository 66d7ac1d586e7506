"""What an interactive round costs the database, stage by stage: its POST, its claim, each answer stored as it
finishes, and its finish (the last answer, `round.done` and what it sends after). A person waits on each of these
(docs/benchmarks.md, "Rounds end to end"), so a query added to any of them should be a decision, not an accident.

The answers are made up here (the worker's functions are called on this thread, so every query is counted on one
connection); tests/compare/test_execution.py runs rounds for real. The second test checks what lets a round skip
queries: its answers are checked against the tools its claim read, and its grading reads the assertions as they
are when it finishes.
"""

import json

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from compare.assertions.services import assertions_rerun
from compare.datasets.services import dataset_create
from compare.experiments.config import config_read
from compare.experiments.files import DirectoryFiles
from compare.experiments.services import experiment_create, experiment_start
from compare.models import AssertionResult, Mode, Output, OutputStatus
from compare.rounds.start import round_start
from compare.rounds.worker import output_record, round_claim, round_complete
from lab.engine.fanout import Result
from lab.jobs.kinds import Lane
from lab.providers.answer import Answer
from tests.fixtures.compare_factories import INSTANT, make_group, make_round

pytestmark = pytest.mark.django_db

ANSWER = Answer(status=OutputStatus.OK, text="**Tea**, of course.", finish_reason="stop", input_tokens=5)
WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
    },
}


def statements(queries) -> list[str]:
    """The statements sent, without the savepoints of atomic blocks nested in the test's transaction."""
    return [query["sql"] for query in queries if not query["sql"].startswith(("SAVEPOINT", "RELEASE SAVEPOINT"))]


def test_an_interactive_round_of_five_costs_a_fixed_few_queries_at_each_stage(
    workspace, owner, api, django_capture_on_commit_callbacks
):
    group = make_group(workspace, owner, models=[INSTANT] * 5, mode=Mode.CUSTOM)

    # Membership, the group, its lock (which also says whether it is an experiment's), its variants, their
    # connections (the provider rules), the last round number, the round (its outputs are COPYed, not counted).
    with CaptureQueriesContext(connection) as post:
        response = api.post(f"/api/v1/groups/{group.pk}/runs/", {}, format="json")
    assert response.status_code == 202, response.json()
    post_sql = statements(post)
    assert len(post_sql) == 7, post_sql

    # The round with its group, the UPDATE that takes it, its variants (read once for a claim of any number of
    # rounds, not once an output: compare/rounds/worker.py), its outputs, the connections, and the outputs'
    # rendered messages.
    with CaptureQueriesContext(connection) as claim:
        claimed = round_claim(round_id=response.json()["rounds"][0]["id"])
    assert len(claimed.calls) == 5
    claim_sql = statements(claim)
    assert len(claim_sql) == 6, claim_sql

    results = [Result(key=call.key, answer=ANSWER) for call in claimed.calls]
    # Each answer but the last: its UPDATE, and its row read back for `output.done`.
    with CaptureQueriesContext(connection) as answers:
        for result in results[:-1]:
            assert output_record(result=result, checks=claimed.checks) is not None
    answers_sql = statements(answers)
    assert len(answers_sql) == 4 * 2, answers_sql

    # The last answer and its `output.done` row, the round's UPDATE and its row, the UPDATE that fails answers a
    # failed write left unfinished, the judges to ask, and (after `round.done` is sent) the run's progress count.
    with CaptureQueriesContext(connection) as finish, django_capture_on_commit_callbacks(execute=True):
        round_complete(claimed=claimed, results=results[-1:], events=True)
    finish_sql = statements(finish)
    assert len(finish_sql) == 7, finish_sql
    assert list(Output.objects.filter(round__group=group).values_list("status", flat=True)) == [OutputStatus.OK] * 5


def test_answers_are_checked_against_their_claims_tools_and_graded_with_the_assertions_at_the_finish(workspace, owner):
    group = make_group(
        workspace, owner, models=[INSTANT, INSTANT], tools=[WEATHER], response_schema={"schema": {}, "mode": "validate"}
    )
    coffee = [{"type": "contains", "value": "Coffee"}]
    dataset = dataset_create(
        workspace=workspace, user=owner, name="drinks", rows=[{"vars": {"topic": "tea"}, "assertions": coffee}]
    )
    plain, with_row = make_round(group), make_round(group, dataset_row=dataset.rows.get())
    claimed = [round_claim(round_id=plain.pk), round_claim(round_id=with_row.pk)]
    assert set(claimed[0].checks) == {call.key for call in claimed[0].calls}  # every variant has the group's tools

    # The comparison had no assertions when its rounds were claimed; those given while they run apply at the finish.
    assertions_rerun(group=group, assertions=[{"type": "contains", "value": "Tea"}])
    calls = [{"id": "c1", "name": "get_weather", "arguments": json.dumps({"town": "Paris"})}]
    answer = Answer(status=OutputStatus.OK, text='{"drink": "Tea"}', tool_calls=calls)
    for round_ in claimed:
        round_complete(claimed=round_, results=[Result(key=c.key, answer=answer) for c in round_.calls], events=False)

    outputs = list(Output.objects.filter(round__in=[plain, with_row]).order_by("round_id", "variant__position"))
    for output in outputs:
        assert output.schema_valid is True
        assert [(call["name"], call["valid"]) for call in output.tool_calls] == [("get_weather", False)]
        assert "city" in output.tool_calls[0]["error"]
    # The group's "Tea" passes; the row's "Coffee", graded after it, fails.
    assert [output.assertions_passed for output in outputs] == [True, True, False, False]
    assert AssertionResult.objects.filter(output__round=with_row).count() == 4


def test_one_round_of_a_comparison_is_interactive_and_an_experiments_one_round_is_batch(workspace, owner, tmp_path):
    # The lock that numbers a start's rounds also reads whether its comparison is an experiment's.
    (round_,) = round_start(group=make_group(workspace, owner), user=owner)
    assert round_.lane == Lane.INTERACTIVE
    config = config_read(
        f"name: One\nmodels:\n  - model: '{INSTANT}'\nprompts:\n  - name: hello\n    prompt: Say hello.\n",
        source="one.yaml",
        files=DirectoryFiles(tmp_path),
    )
    experiment = experiment_create(workspace=workspace, user=owner, config=config)
    (round_,) = experiment_start(experiment=experiment, user=owner, run_here=True)
    assert round_.lane == Lane.BATCH
