"""The smaller Toor-parity rules: a schema that constrains nothing is refused, Toor's schema form is read as an
object of required properties, combination labels never cut a name in the middle, and an answer cut off at the
token limit is marked "cut off" on the comparison page (and not judged, as experiments' are not)."""

import pytest

from compare.experiments.config import config_from_data
from compare.experiments.files import UploadedFiles
from compare.experiments.plan import LABEL_LENGTH, combination_labels
from compare.experiments.spec import Combination, ConfigError, ParamSet, Prompt
from judging.services import verdict_request
from judging.verdicts import verdict_execute
from tests.fixtures.judging_factories import answered_round, judged_group, make_judge


def read(data: dict):
    base = {"models": [{"model": "cands:fake"}], "prompts": [{"name": "ask", "prompt": "Say hi."}]}
    return config_from_data({**base, **data}, source="t.yaml", files=UploadedFiles({}))


@pytest.mark.parametrize("schema", [{}, {"title": "An answer", "description": "anything"}])
def test_a_schema_that_constrains_nothing_is_refused(schema):
    with pytest.raises(ConfigError) as caught:
        read({"structured-output": {"schema": schema}})
    [message] = caught.value.messages
    assert message.startswith("t.yaml: structured-output: schema: constrains nothing")


def test_toor_s_schema_form_is_an_object_of_required_properties():
    config = read({"structured-output": {"schema": {"priority": {"type": "string", "enum": ["low", "high"]}}}})
    assert config.structured.schema == {
        "type": "object",
        "properties": {"priority": {"type": "string", "enum": ["low", "high"]}},
        "required": ["priority"],
    }
    # A mapping that is already a JSON schema is kept as it is.
    kept = read({"structured-output": {"schema": {"type": "object", "properties": {"a": {"type": "string"}}}}})
    assert kept.structured.schema == {"type": "object", "properties": {"a": {"type": "string"}}}


def test_long_labels_drop_whole_names_and_stay_unique():
    model = "openrouter::" + "a-very-long-vendor/" + "x" * 40
    combos = [
        Combination(model, ParamSet("precise-and-careful", {}), Prompt("friendly-support-reply", "t")),
        Combination(model, ParamSet("precise-and-careful", {}), Prompt("short-support-reply", "t")),
    ]
    labels = combination_labels(combos)
    assert all(len(label) <= LABEL_LENGTH for label in labels)
    assert labels == [f"{model} · #1", f"{model} · #2"]  # no name cut in the middle
    assert combination_labels([Combination("a::b", ParamSet("p", {}), Prompt("q", "t"))]) == ["a::b · p · q"]


@pytest.mark.django_db
def test_a_cut_off_answer_is_marked_on_the_comparison_page_and_not_judged(
    client, workspace, owner, fake_llm, connections
):
    group = judged_group(workspace, owner, count=2)
    round_ = answered_round(group, owner, ["alpha on tea", "beta on"], finish="length")
    judge, _ = make_judge(workspace, owner, fake_llm)

    verdict = verdict_execute(verdict_id=verdict_request(round=round_, user=owner, judge=judge).pk)

    assert verdict.error == "No complete answer to judge."
    assert all(s["reason"].startswith("Cut off at the token limit") for s in verdict.skipped)
    client.force_login(owner)
    html = client.get(f"/compare/{group.pk}/rounds/{round_.number}/").content.decode()
    assert html.count('data-role="cut-off"') == 2
