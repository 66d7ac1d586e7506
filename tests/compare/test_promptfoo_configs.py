"""promptfoo configs run unchanged by `manage.py experiment run` (issue 41, items 3 and 4): the configs in
tests/fixtures/promptfoo/ (written for this project in promptfoo's format) against the fake LLM server, each checked
for its per-test verdicts, the exit code, promptfoo's JSON keys and the exact body each provider was sent."""

from __future__ import annotations

import json
import shutil
import uuid
from pathlib import Path

import pytest

from lab.models import Connection
from lab.services import connection_create
from tests.fixtures.experiments import run_command
from tests.fixtures.judging_factories import KEY

pytestmark = pytest.mark.django_db(transaction=True)

CONFIGS = Path(__file__).parent.parent / "fixtures" / "promptfoo"


def config(name: str) -> str:
    return str(CONFIGS / name / "promptfooconfig.yaml")


@pytest.fixture
def openai_env(monkeypatch, fake_llm):
    """promptfoo's OpenAI variables, pointing at a base URL of the fake server only this test uses."""
    url = fake_llm.url("v1", id=uuid.uuid4().hex[:10])
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_BASE_URL", url)
    return url


def verdicts(path: Path) -> dict[tuple[int, int], bool]:
    data = json.loads(path.read_text())
    return {(r["testIdx"], r["promptIdx"]): r["success"] for r in data["results"]["results"]}


def test_the_basic_config_grades_every_test_and_exits_100_when_one_fails(workspace, fake_llm, openai_env, tmp_path):
    fake_llm.script(
        "gpt-4o-mini",
        *[{"text": "Paris", "match": "France"}] * 2,
        *[{"text": "Tokyo, not Kyoto.", "match": "Japan"}] * 2,
        *[{"text": "Sydney", "match": "Australia"}] * 2,
        url=openai_env,
    )
    output = tmp_path / "results.json"

    ran = run_command("run", config("basic"), "--output", str(output))

    assert ran.code == 100, ran.err + ran.out
    # Tests in file order, a column per prompt: France passes both, Japan fails not-contains, Australia fails equals.
    assert verdicts(output) == {
        (0, 0): True,
        (0, 1): True,
        (1, 0): False,
        (1, 1): False,
        (2, 0): False,
        (2, 1): False,
    }
    data = json.loads(output.read_text())
    first = data["results"]["results"][0]
    assert first["provider"]["id"] == "openai:chat:gpt-4o-mini"
    assert first["vars"] == {"country": "France"}
    assert first["response"]["output"] == "Paris"
    assert first["score"] == 1.0
    # defaultTest's assertion is graded first.
    assert [c["assertion"]["type"] for c in first["gradingResult"]["componentResults"]] == [
        "not-icontains",
        "icontains",
    ]
    assert all({"pass", "score", "reason"} <= set(c) for c in first["gradingResult"]["componentResults"])
    japan = data["results"]["results"][2]["gradingResult"]["componentResults"]
    assert [c["pass"] for c in japan] == [True, True, False]
    assert data["results"]["stats"]["successes"] == 2
    assert data["results"]["stats"]["failures"] == 4
    assert "Successes: 2" in ran.out and "Failures: 4" in ran.out
    assert "[PASS] Paris" in ran.out and "[FAIL]" in ran.out
    # promptfoo's request: the rendered prompt as the one user message, its default temperature and max tokens.
    bodies = fake_llm.requests("gpt-4o-mini", url=openai_env)
    france = next(b for b in bodies if "France? Answer" in json.dumps(b))
    assert france["messages"] == [{"role": "user", "content": "What is the capital of France? Answer in one word."}]

