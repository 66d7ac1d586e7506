"""An experiment file's `assert` (promptfoo's key) grades every answer of the run, and the results page shows the
pass rate per combination with its interval (issue 41, item 2)."""

import pytest

from compare.experiments.config import config_read
from compare.experiments.files import DirectoryFiles
from compare.experiments.runner import experiment_run_here
from compare.experiments.services import experiment_create, experiment_start
from compare.models import Output

pytestmark = pytest.mark.django_db(transaction=True)

FILE = """
name: Greetings checked
models:
  - model: cands:{good}
  - model: cands:{bad}
model-parameters:
  - name: default
prompts:
  - name: greet
    prompt: Greet <<person>>.
dataset:
  - name: ada
    vars: {{person: Ada}}
  - name: bob
    vars: {{person: Bob}}
assert:
  - type: icontains
    value: "{{{{person}}}}"
  - type: not-contains
    value: sorry
"""


def test_an_experiments_assertions_grade_its_answers_and_show_on_its_page(
    client, workspace, owner, connections, fake_llm, tmp_path
):
    good, bad = fake_llm.model(tokens=3), fake_llm.model(tokens=3)
    fake_llm.script(good, {"text": "Hello Ada!", "match": "Ada"}, {"text": "Hi bob.", "match": "Bob"})
    fake_llm.script(bad, {"text": "Sorry, who?", "match": "Ada"}, {"text": "Hello Bob", "match": "Bob"})
    config = config_read(FILE.format(good=good, bad=bad), source="greet.yaml", files=DirectoryFiles(tmp_path))
    assert config.assertions == [
        {"type": "icontains", "value": "{{person}}"},
        {"type": "not-contains", "value": "sorry"},
    ]
    experiment = experiment_create(workspace=workspace, user=owner, config=config)
    assert experiment.config["assertions"] == config.assertions == experiment.group.assertions  # export keeps them
    experiment_start(experiment=experiment, user=owner, run_here=True)
    experiment_run_here(experiment=experiment, concurrency=4, on_progress=lambda progress: None)

    verdicts = Output.objects.filter(round__group=experiment.group).order_by("round__number", "variant__position")
    assert [o.assertions_passed for o in verdicts] == [True, False, True, True]  # "Sorry, who?" lacks Ada
    client.force_login(owner)
    page = client.get(f"/compare/{experiment.group_id}/experiment/").content.decode()
    assert 'data-role="pass-rate-table"' in page
    assert '<td>2 of 2</td><td data-role="rate">100%</td>' in page
    assert '<td>1 of 2</td><td data-role="rate">50%</td>' in page
