"""promptfoo configs with model-graded assertions run through `manage.py experiment run` to a final verdict
(issue 41): the command has the graders run in its own process, by the grading job a worker runs, over the person's
private connection from promptfoo's variables; the table, promptfoo's JSON and the stored results agree, and a grader
that fails is an error of its cell (promptfoo's `stats.errors`), never a pass. A config without a grader, or with a
`rubricPrompt`, is refused up front naming the key."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import pytest

from compare.assertions.models import AssertionResult
from compare.models import CompareGroup, Output
from judging.models import AssertionGrading, AssertionGradingStatus
from lab.models import Connection
from tests.fixtures.experiments import run_command
from tests.fixtures.judging_factories import KEY

pytestmark = pytest.mark.django_db(transaction=True)

CONFIGS = Path(__file__).parent.parent / "fixtures" / "promptfoo"


def config(name: str) -> str:
    return str(CONFIGS / name / "promptfooconfig.yaml")


@pytest.fixture
def openai_env(monkeypatch, fake_llm):
    url = fake_llm.url("v1", id=uuid.uuid4().hex[:10])
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    return url


def test_model_graded_assertions_reach_a_verdict_through_the_cli(workspace, owner, fake_llm, openai_env, tmp_path):
    fake_llm.script(
        "gpt-4o-mini",
        {"text": "Yes, a refund is possible within 30 days.", "match": "refund"},
        {"text": "We are open 9 to 5.", "match": "open"},
        {"text": "At 1 Main Street.", "match": "shop"},
        url=openai_env,
    )
    rubric_pass = {"reason": "Polite and explains it.", "pass": True, "score": 0.9}
    closedqa_no = {"reason": "No hours are named exactly.", "verdict": "N"}
    fake_llm.script(
        "gpt-4o",
        {"text": json.dumps(rubric_pass), "match": "Explains the refund policy politely"},
        {"text": json.dumps(closedqa_no), "match": "States the opening hours"},
        url=openai_env,
    )
    # The third test's own grader answers what cannot be read, every time it is asked.
    fake_llm.script("gpt-4.1-mini", *[{"text": "no JSON here"}] * 4, url=openai_env)
    output = tmp_path / "results.json"

    ran = run_command("run", config("graded"), "--output", str(output))

    assert ran.code == 100, ran.err + ran.out
    data = json.loads(output.read_text())
    rows = {r["testIdx"]: r for r in data["results"]["results"]}
    assert [rows[i]["success"] for i in range(3)] == [True, False, False]
    refund = rows[0]["gradingResult"]["componentResults"]
    assert [(c["assertion"]["type"], c["pass"], c["score"]) for c in refund] == [
        ("contains", True, 1.0),
        ("llm-rubric", True, 0.9),
    ]
    assert refund[1]["reason"] == "Polite and explains it."
    hours = rows[1]["gradingResult"]["componentResults"]
    assert [(c["assertion"]["type"], c["pass"], c["score"]) for c in hours] == [("model-graded-closedqa", False, 0.0)]
    assert rows[1]["error"] is None and rows[1]["failureReason"] == 1
    # The grader's failure is the cell's error (promptfoo counts it apart), not a pass and not a failure.
    address = rows[2]
    assert address["error"].startswith("Not graded:") and address["failureReason"] == 2
    assert address["gradingResult"]["componentResults"][0]["pass"] is False
    assert data["results"]["stats"] == {**data["results"]["stats"], "successes": 1, "failures": 1, "errors": 1}
    assert "[PASS] Yes, a refund" in ran.out and "[FAIL] No hours" in ran.out and "[ERROR] Not graded" in ran.out
    assert "Successes: 1" in ran.out and "Failures: 1" in ran.out and "Errors: 1" in ran.out

    # The graders were asked over the person's private connection (the same URL and key as the answers).
    private = Connection.objects.get(workspace=workspace, owner=owner)
    group = CompareGroup.objects.get()
    rows_stored = [row.assertions for row in group.dataset.rows.order_by("position")]
    assert rows_stored[0][1]["provider"] == f"{private.name}::gpt-4o"
    assert rows_stored[2][0]["provider"] == f"{private.name}::gpt-4.1-mini"
    asked = fake_llm.requests("gpt-4o", url=openai_env)
    assert len(asked) == 2
    rubric_request = next(b for b in asked if "refund policy" in json.dumps(b))
    shown = json.dumps(rubric_request["messages"])
    assert "Explains the refund policy politely" in shown and "a refund is possible within 30 days" in shown
    assert "gpt-4o-mini" not in shown  # the grader is never told which model answered
    assert rubric_request["temperature"] == 0

    # The stored results (what the experiment's page shows) agree with the table.
    assert not AssertionGrading.objects.exclude(status=AssertionGradingStatus.DONE).exists()
    outputs = Output.objects.filter(round__group=group).order_by("round__number")
    assert [o.assertions_passed for o in outputs] == [True, False, None]
    states = [
        list(AssertionResult.objects.filter(output=o).order_by("position").values_list("state", "passed"))
        for o in outputs
    ]
    assert states == [[("graded", True), ("graded", True)], [("graded", False)], [("not_graded", None)]]


def test_a_model_graded_config_without_a_grader_or_with_rubric_prompt_is_refused(workspace, fake_llm, openai_env):
    ran = run_command("run", config("graded_refused"))

    assert ran.code == 2
    source = config("graded_refused")
    for expected in (
        f"{source}: defaultTest: options: rubricPrompt: not supported",
        f"{source}: tests[1]: assert[0]: 'llm-rubric' needs a grader: set defaultTest.options.provider",
        "the lab has no default grader",
        f"{source}: tests[2]: assert[0]: rubricPrompt: not supported",
    ):
        assert expected in ran.err, ran.err
    assert "nothing was run" in ran.err
    assert fake_llm.requests("gpt-4o-mini", url=openai_env) == []
