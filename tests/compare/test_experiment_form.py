"""The experiment build form makes anything a file can: classification judges with their fields, any number of
prompts and parameter sets up to the file's limit, every model parameter; each problem shows once, at the field
that wrote it; running the same rows again reuses their dataset instead of adding a copy."""

import re

import pytest
from django.test import Client

from compare.experiments.models import Experiment
from compare.models import Dataset, Variant

pytestmark = pytest.mark.django_db


@pytest.fixture
def browser(owner) -> Client:
    client = Client()
    client.force_login(owner)
    return client


def build(*, prompts: list[tuple[str, str]], params: list[dict] = (), extra_rows: int = 1, **fields) -> dict:
    """The build form's post: the prompts and parameter sets as rows, plus `extra_rows` empty ones of each."""
    form = {"kind": "form", "name": "Built here", "output_format": "json", **fields}
    form["prompts-TOTAL_FORMS"] = str(len(prompts) + extra_rows)
    form["prompts-INITIAL_FORMS"] = "0"
    for i, (name, prompt) in enumerate(prompts):
        form[f"prompts-{i}-name"], form[f"prompts-{i}-prompt"] = name, prompt
    form["params-TOTAL_FORMS"] = str(len(params) + extra_rows)
    form["params-INITIAL_FORMS"] = "0"
    for i, values in enumerate(params):
        form.update({f"params-{i}-{key}": str(value) for key, value in values.items()})
    return form


ROWS = "- {name: one, vars: {topic: tea, audience: kids}}\n- {name: two, vars: {topic: rain, audience: cooks}}\n"


def estimate_and_run(browser, workspace, form) -> Experiment:
    estimate = browser.post(f"/w/{workspace.pk}/experiments/estimate/", form)
    assert estimate.status_code == 200, estimate.context.get("errors") or estimate.content.decode()[-3000:]
    ran = browser.post(f"/w/{workspace.pk}/experiments/run/", {"config": estimate.context["data"], "source": "form"})
    assert ran.status_code == 302, ran.context and ran.context.get("errors")
    return Experiment.objects.order_by("-pk").first()


def test_the_form_builds_a_classification_judge_experiment(browser, workspace, connections):
    form = build(
        prompts=[("ask", "Tell <<audience>> about <<topic>>.")],
        models=["cands::fake"],
        rows=ROWS,
        evaluation_type="binary-classification",
        judge="judge::fake",
        criteria="Is the answer right for {{audience}}?",
        target="fitting",
        non_target="unfitting",
        uncertainty="non-target",
        input_columns="audience",
        include_score="on",
    )

    experiment = estimate_and_run(browser, workspace, form)

    assert experiment.config["evaluation"] == {
        "type": "binary-classification",
        "model": "judge::fake",
        "criteria": "Is the answer right for {{audience}}?",
        "target": "fitting",
        "non-target": "unfitting",
        "uncertainty": "non-target",
        "input-columns": ["audience"],
        "include-reasoning": False,
        "include-score": True,
    }
    assert experiment.evaluates and experiment.evaluations.count() == 2


def test_the_form_builds_a_multiclass_judge_from_category_lines(browser, workspace, connections):
    form = build(
        prompts=[("ask", "Tell me about <<topic>>.")],
        models=["cands::fake"],
        rows=ROWS,
        evaluation_type="multiclass-classification",
        judge="judge::fake",
        criteria="What is the tone?",
        categories="friendly: warm and kind\nformal: stiff: and proper\n",
        include_reasoning="on",
    )

    experiment = estimate_and_run(browser, workspace, form)

    evaluation = experiment.config["evaluation"]
    assert evaluation["categories"] == {"friendly": "warm and kind", "formal": "stiff: and proper"}
    assert evaluation["include-reasoning"] is True


def test_more_than_three_prompts_and_parameter_sets_with_every_parameter_reach_the_variants(
    browser, workspace, connections
):
    prompts = [(f"p{i}", f"Variant {i} on <<topic>>.") for i in range(1, 6)]
    params = [
        {"name": "s1", "temperature": 0.2, "topK": 40, "seed": 7, "maxOutputTokens": 50},
        {"name": "s2", "presencePenalty": 0.5, "frequencyPenalty": -0.25, "topP": 0.9},
        {"name": "s3", "stopSequences": "END\nSTOP"},
        {"name": "s4", "seed": 0},
    ]
    form = build(prompts=prompts, params=params, extra_rows=2, models=["judge::fake"], rows=ROWS)

    experiment = estimate_and_run(browser, workspace, form)

    variants = Variant.objects.filter(group=experiment.group)
    assert variants.count() == 20
    by_label = {(v.params.get("top_k"), v.params.get("seed")) for v in variants}
    assert (40, 7) in by_label and (None, 0) in by_label
    s1 = variants.filter(params__top_k=40).first().params
    assert s1 == {"temperature": 0.2, "top_k": 40, "seed": 7, "max_tokens": 50}
    s2 = variants.filter(params__presence_penalty=0.5).first().params
    assert s2 == {"presence_penalty": 0.5, "frequency_penalty": -0.25, "top_p": 0.9}
    assert variants.filter(params__stop=["END", "STOP"]).count() == 5
    assert {v.prompt for v in variants} == {f"Variant {i} on {{{{topic}}}}." for i in range(1, 6)}


def test_the_form_takes_every_other_section_of_a_file(browser, workspace, connections):
    form = build(
        prompts=[("ask", "<<greeting>>, tell me about <<topic>> at <<shop>>."), ("two", "Just <<topic>>.")],
        models=["judge::fake"],
        rows=ROWS,
        description="All the rest",
        system_prompt="You sell kettles.",
        variables="shop: Kettles & Co",
        combinations="- {model: 'judge::fake', model-parameters: default, prompt: two}",
        timeout="30",
        cache="on",
        **{"prompts-0-variables": "{greeting: Hello}"},
    )

    experiment = estimate_and_run(browser, workspace, form)

    config = experiment.config
    assert (config["description"], config["system-prompt"], config["variables"]) == (
        "All the rest",
        "You sell kettles.",
        {"shop": "Kettles & Co"},
    )
    assert config["prompts"][0]["variables"] == {"greeting": "Hello"}
    assert config["combinations"] == [{"model": "judge::fake", "model-parameters": "default", "prompt": "two"}]
    assert (config["timeout"], config["cache"]) == (30.0, True)
    assert experiment.group.variants.count() == 1


def _field_of(html: str, message: str) -> str:
    """The name of the form control inside the <label> (or row) that shows `message`."""
    at = html.index(message)
    start = max(html.rfind("<label", 0, at), html.rfind("data-row>", 0, at))
    found = re.search(r'name="([^"]+)"', html[start:at]) or re.search(r'name="([^"]+)"', html[at:])
    return found.group(1)


def test_each_problem_shows_once_at_its_field(browser, workspace, connections):
    prompts = [(f"p{i}", f"Say <<topic>> {i}.") for i in range(1, 4)] + [("p4", "Bad <<topic:xml>>")]
    form = build(
        prompts=prompts,
        params=[{"name": "hot", "temperature": 5}],
        models=["judge::fake"],
        rows=ROWS,
        evaluation_type="binary-classification",
        judge="judge::fake",
        target="yes",
        non_target="yes",
    )

    page = browser.post(f"/w/{workspace.pk}/experiments/estimate/", form)

    assert page.status_code == 400
    html = page.content.decode()
    # A field the form itself checks: once, in its field.
    assert html.count("Ensure this value is less than or equal to 2") == 1
    assert _field_of(html, "Ensure this value is less than or equal to 2") == "params-0-temperature"
    # Fixed that, the file's checks speak: each message once, at the field that wrote that part of the file.
    form["params-0-temperature"] = "1"
    page = browser.post(f"/w/{workspace.pk}/experiments/estimate/", form)
    assert page.status_code == 400
    html = page.content.decode()
    expected = {
        "prompts[4] (p4): prompt: &lt;&lt;topic:xml&gt;&gt; has an unknown format": "prompts-3-prompt",
        "evaluation: criteria: say what the judge classifies": "criteria",
        "evaluation: target and non-target: two different categories": "target",
    }
    for message, field in expected.items():
        assert html.count(message) == 1, message
        assert _field_of(html, message) == field, message
    assert "problems to fix" not in html  # every one is at its field, none left for the list above


def test_add_a_prompt_without_the_script_posts_back_one_more_row(browser, workspace, connections):
    form = build(prompts=[("ask", "About <<topic>>.")], extra_rows=0, models=["judge::fake"], add="prompts", name="")
    form.update({"params-TOTAL_FORMS": "2", "params-0-name": "cool", "params-0-topK": "5"})

    page = browser.post(f"/w/{workspace.pk}/experiments/estimate/", form)

    assert page.status_code == 200
    html = page.content.decode()
    assert 'name="prompts-1-prompt"' in html and 'name="prompts-2-prompt"' not in html
    assert "About &lt;&lt;topic&gt;&gt;." in html and 'value="cool"' in html and 'value="5"' in html
    assert 'name="params-1-name"' in html and 'name="params-2-name"' not in html  # as many sets as before
    assert "errorlist" not in html  # nothing is checked until Estimate (the title is still empty)


def test_running_the_same_rows_again_reuses_their_dataset(browser, workspace, connections):
    form = build(prompts=[("ask", "About <<topic>>.")], models=["judge::fake"], rows=ROWS)

    first = estimate_and_run(browser, workspace, form)
    second = estimate_and_run(browser, workspace, form)

    assert Dataset.objects.filter(workspace=workspace).count() == 1
    assert first.group.dataset_id == second.group.dataset_id
    # Other rows under the same title: a new dataset, never a second of the same name.
    third = estimate_and_run(browser, workspace, {**form, "rows": "- {name: three, vars: {topic: snow}}"})
    names = sorted(Dataset.objects.filter(workspace=workspace).values_list("name", flat=True))
    assert names == ["Built here · rows", "Built here · rows (2)"]
    assert third.group.dataset.name == "Built here · rows (2)"


def test_a_problem_of_a_whole_section_shows_at_its_first_row(browser, workspace, connections):
    form = build(prompts=[], models=["judge::fake"], rows=ROWS, other_models="nope:model")

    html = browser.post(f"/w/{workspace.pk}/experiments/estimate/", form).content.decode()

    message = "prompts: a list of entries (at least one)"
    assert html.count(message) == 1 and _field_of(html, message).startswith("prompts-0-")
    unknown = "models[2] (nope:model): model: This workspace has no connection named “nope”"
    assert html.count(unknown) == 1 and _field_of(html, unknown) == "other_models"
    assert "problems to fix" not in html


TOOLS = (
    "- type: function\n"
    "  function:\n"
    "    name: lookup\n"
    "    description: Look a topic up\n"
    "    parameters: {type: object, properties: {topic: {type: string}}, required: [topic]}\n"
)


def test_the_form_takes_assertions_tools_and_a_validate_only_schema(browser, workspace, connections):
    rows = (
        "- {name: one, vars: {topic: tea}, assertions: [{type: icontains, value: tea}]}\n"
        "- {name: two, vars: {topic: rain}}\n"
    )
    form = build(
        prompts=[("ask", "About <<topic>>.")],
        models=["cands::fake"],
        rows=rows,
        schema="{type: object, properties: {answer: {type: string}}}",
        output_mode="validate",
        tools=TOOLS,
        tool_choice="lookup",
        assertions='[{"type": "not-contains", "value": "sorry"}, {"type": "latency", "threshold": 60000}]',
    )

    experiment = estimate_and_run(browser, workspace, form)

    group = experiment.group
    assert [a["type"] for a in group.assertions] == ["not-contains", "latency"]
    assert group.tools[0]["function"]["name"] == "lookup" and group.tool_choice == "lookup"
    assert group.response_schema["mode"] == "validate"
    assert group.response_schema["schema"]["properties"] == {"answer": {"type": "string"}}
    own = dict(group.dataset.rows.values_list("name", "assertions"))
    assert [a["type"] for a in own["one"]] == ["icontains"] and own["two"] == []
    config = experiment.config
    assert config["structured-output"]["mode"] == "validate" and config["tool-choice"] == "lookup"
    assert config["dataset"][0]["assertions"][0]["value"] == "tea"  # export writes the row's checks back


def test_a_bad_assertion_tool_or_tool_choice_shows_once_at_its_field(browser, workspace, connections):
    form = build(
        prompts=[("ask", "About <<topic>>.")],
        models=["cands::fake"],
        rows="- {name: one, vars: {topic: tea}, assertions: [{type: nonsense}]}\n",
        tools="- {type: function, function: {name: lookup, parameters: {type: object, properties: 7}}}\n",
        tool_choice="fetch",
        assertions="[{type: contains}]",
    )

    page = browser.post(f"/w/{workspace.pk}/experiments/estimate/", form)

    assert page.status_code == 400
    html = page.content.decode()
    errors = re.findall(r'<ul class="errorlist[^"]*"[^>]*>(.*?)</ul>', html, re.DOTALL)
    placed = {}
    for field in ("tools", "tool_choice", "assertions", "rows"):
        placed[field] = [m for m in re.findall(r"<li>(.*?)</li>", " ".join(errors)) if _field_of(html, m) == field]
    assert any("Tool lookup" in m for m in placed["tools"]), placed
    assert any("tool_choice &#x27;fetch&#x27;" in m for m in placed["tool_choice"]), placed
    assert any(m.startswith("assertions: ") for m in placed["assertions"]), placed
    assert any("dataset[1] (one): assertions: " in m for m in placed["rows"]), placed
    for messages in placed.values():
        for message in messages:
            assert html.count(message) == 1, message
    assert "problems to fix" not in html
