"""Experiments run end to end against the fake LLM server over HTTP, through compare's rounds and the judge: answers,
schema validity, pointwise scores, formatted placeholders, files, live progress, and the estimate against the run."""

import asyncio

import pytest
from statsmodels.stats.proportion import proportion_confint

from compare.experiments.config import config_read
from compare.experiments.files import DirectoryFiles
from compare.experiments.models import Evaluation, EvaluationStatus
from compare.experiments.report import results_text
from compare.experiments.results import experiment_results
from compare.experiments.runner import experiment_run_here
from compare.experiments.services import experiment_create, experiment_plan, experiment_start
from compare.models import Output, OutputStatus
from tests.compare.events import GroupEvents, in_thread
from tests.fixtures.experiments import sample
from tests.judging.scripts import pointwise

pytestmark = pytest.mark.django_db(transaction=True)


def config_of(path):
    return config_read(path.read_text(), source=path.name, files=DirectoryFiles(path.parent))


def run(path, workspace, user, **create):
    experiment = experiment_create(workspace=workspace, user=user, config=config_of(path), **create)
    experiment_start(experiment=experiment, user=user, run_here=True)
    experiment_run_here(experiment=experiment, concurrency=4, on_progress=lambda progress: None)
    experiment.refresh_from_db()
    return experiment


def outputs(experiment) -> list[Output]:
    return list(
        Output.objects.filter(round__group=experiment.group)
        .select_related("variant", "evaluation", "round__dataset_row")
        .order_by("round__number", "variant__position")
    )


def test_the_minimal_file_is_answered_with_its_parameters_and_scored_by_the_judge(
    workspace, owner, connections, fake_llm
):
    fake_llm.script("fake", pointwise({"Overall": (4, "Warm and short.")}, about="Ada, who likes tea"))

    experiment = run(sample("minimal.yaml"), workspace, owner)

    [output] = outputs(experiment)
    assert output.status == OutputStatus.OK and output.output_tokens == 20
    assert output.rendered_prompt == "Write a short greeting for Ada, who likes tea."
    sent = [r for r in fake_llm.requests("fake?tokens=20") if "Ada, who likes tea" in r["messages"][-1]["content"]]
    assert sent and sent[-1]["temperature"] == 0.2 and sent[-1]["max_completion_tokens"] == 20
    evaluation = output.evaluation
    assert (evaluation.status, evaluation.scale_score, evaluation.score) == (EvaluationStatus.DONE, 4, 0.75)
    assert evaluation.reason == "Warm and short." and evaluation.judge_calls == 1
    assert evaluation.input_tokens > 0 and evaluation.cost > 0 and evaluation.schema_valid is None
    judged = [r for r in fake_llm.requests("fake") if "Ada, who likes tea" in r["messages"][-1]["content"]][-1]
    assert output.text in judged["messages"][-1]["content"]


def test_a_classifier_is_checked_against_its_schema_and_shown_to_the_judge_as_yaml(
    workspace, owner, connections, fake_llm
):
    judge = "fake?id=classifier"
    fake_llm.script(judge, *[pointwise({"Overall": (1, "The label fits.")}, about="sentiment: positive")] * 2)

    experiment = run(sample("classifier.yaml"), workspace, owner)

    answers = outputs(experiment)
    assert [(o.round.dataset_row.name, o.variant.position) for o in answers] == [
        ("love-it", 1),
        ("love-it", 2),
        ("broke", 1),
        ("broke", 2),
    ]
    for output in answers:
        evaluation = output.evaluation
        assert output.status == OutputStatus.OK and evaluation.status == EvaluationStatus.DONE
        if output.variant.position == 1:
            assert (evaluation.schema_valid, evaluation.schema_errors) == (True, [])
            assert (evaluation.scale_score, evaluation.reason) == (1, "The label fits.")
        else:
            assert evaluation.schema_valid is False
            assert evaluation.schema_errors == ["sentiment: 'meh' is not one of ['positive', 'negative', 'neutral']"]
            assert evaluation.scale_score == 0  # unscripted, the fake judge gives the lowest score
    shown = [r["messages"][-1]["content"] for r in fake_llm.requests(judge)]
    assert any("<answer>\nsentiment: positive\nconfidence: high\n</answer>" in text for text in shown)
    assert any("<answer>\nsentiment: meh\n</answer>" in text for text in shown)
    by_model = {a.key: a for a in experiment_results(experiment).averages["model"]}
    valid, invalid = (
        by_model['cands:fake?text={"sentiment":"positive","confidence":"high"}'],
        by_model['cands:fake?text={"sentiment":"meh"}'],
    )
    assert (valid.score, valid.valid_share, invalid.score, invalid.valid_share) == (1, 1.0, 0, 0.0)
    # The command line's report (what `experiment run`/`report` print) gives each share its Wilson interval.
    text = results_text(experiment_results(experiment))
    for share, valid_answers in ((1.0, 2), (0.0, 0)):
        low, high = proportion_confint(valid_answers, 2, alpha=0.05, method="wilson")
        assert f"{share:.0%} (95% interval {low:.0%}–{high:.0%})" in text


def test_nested_values_are_formatted_as_the_placeholders_ask(workspace, owner, connections):
    experiment = run(sample("nested.yaml"), workspace, owner)

    [output] = outputs(experiment)
    # Postgres keeps a JSON object's keys in its own order (shorter first), so qty comes before sku.
    assert output.rendered_prompt == (
        "Summarise this order for the warehouse.\n"
        "id: 17\nitems:\n- qty: 2\n  sku: A1\n- qty: 1\n  sku: B2\nshipping:\n  city: Lyon\n  express: true\n"
        'Customer: {"name": "Ada", "tier": "gold"}\n'
        "Notes: leave at the door\n"
    )
    assert not Evaluation.objects.exists()  # no judge and no schema: nothing to evaluate


def test_prompts_and_datasets_from_files_run_the_listed_combinations_on_every_row(
    workspace, owner, connections, fake_llm
):
    experiment = run(sample("with_files/experiment.json"), workspace, owner)

    answers = outputs(experiment)
    assert len(answers) == 9 and all(o.status == OutputStatus.OK for o in answers)
    assert [o.round.dataset_row.name for o in answers[::3]] == ["refund", "descale", "row-3"]
    assert answers[0].rendered_prompt == (
        "You answer support tickets for a kettle shop. Be warm and brief.\nCustomer Ada asks: How do I get a refund?\n"
    )
    assert answers[1].rendered_prompt == "Answer in one line: How do I get a refund?"
    assert answers[1].output_tokens == 6  # the "short" set's maxOutputTokens
    # Cut off at that limit, the "short" answers are not judged, as in comparisons; the others are.
    cut = [o for o in answers if o.is_cut_off]
    assert cut and all(o.evaluation.status == EvaluationStatus.SKIPPED for o in cut)
    assert all(o.evaluation.reason.startswith("Cut off at the token limit") for o in cut)
    assert all(o.evaluation.status == EvaluationStatus.DONE for o in answers if not o.is_cut_off)
    asked = fake_llm.requests("fake?id=files")[-1]["messages"][-1]["content"]
    assert asked.startswith("Rate how well this support answer resolves the request.\nRequest: <request>\n")
    assert "Scale: An integer from 1 to 10" in asked


def test_the_results_read_each_variant_and_its_group_once_whatever_the_answers(
    workspace, owner, connections, fake_llm, django_assert_num_queries
):
    experiment = run(sample("with_files/experiment.json"), workspace, owner)

    # The experiment's group, its variants, the rounds, the answers with their evaluations: 9 answers or 10,000.
    with django_assert_num_queries(4):
        results = experiment_results(experiment)
        groups = {cell.output.variant.group.pk for cell in results.cells}  # what promptfoo's output reads (tools)
    assert len(results.cells) == 9 and groups == {experiment.group_id}
    # One object a variant (and one group), not one an answer: at 10,000 answers each decoded the group's JSON.
    assert len({id(cell.output.variant) for cell in results.cells}) == 3
    assert len({id(cell.output.variant.group) for cell in results.cells}) == 1
    assert [cell.combo.position for cell in results.cells[:3]] == [1, 2, 3]


def test_an_answer_that_failed_is_not_evaluated_and_says_why(workspace, owner, connections, tmp_path):
    path = tmp_path / "failing.yaml"
    path.write_text(
        "evaluation: {type: binary, model: judge:fake}\n"
        "models: [{model: 'cands:fake?tokens=2'}, {model: 'cands:fake?fault=401'}]\nprompts: {ask: Say hi.}\n"
    )
    experiment = run(path, workspace, owner)

    ok, failed = outputs(experiment)
    assert ok.evaluation.status == EvaluationStatus.DONE
    assert failed.evaluation.status == EvaluationStatus.SKIPPED
    assert failed.evaluation.reason.startswith("No complete answer to evaluate (the answer error: ")


async def test_the_run_reports_its_progress_on_the_groups_channel(workspace, owner, connections):
    path = sample("classifier.yaml")
    experiment = await in_thread(experiment_create, workspace=workspace, user=owner, config=config_of(path))
    await in_thread(experiment_start, experiment=experiment, user=owner, run_here=True)

    async with GroupEvents(experiment.group_id) as events:
        await in_thread(experiment_run_here, experiment=experiment, concurrency=1, on_progress=lambda p: None)
        seen = await events.until("progress", count=2)
        async with asyncio.timeout(10):
            while not any(e["type"] == "progress" and e.get("finished") for e in seen):
                seen = await events.until("progress", count=sum(e["type"] == "progress" for e in seen) + 1)

    mine = [e for e in seen if e["type"] == "progress" and e.get("experiment") == experiment.pk]
    assert mine[-1]["finished"] and (mine[-1]["done"], mine[-1]["total"]) == (8, 8)
    assert [e["done"] for e in mine] == sorted(e["done"] for e in mine)


def test_the_estimate_is_within_ten_percent_of_the_calls_and_tokens_of_the_run(workspace, owner, connections, tmp_path):
    path = tmp_path / "estimate.yaml"
    rows = "\n".join(f"  - {{name: r{i}, vars: {{topic: {word}}}}}" for i, word in enumerate(["tea", "rain", "jazz"]))
    path.write_text(
        "evaluation: {type: 1-5, model: judge:fake}\n"
        "models: [{model: 'cands:fake?tokens=30'}, {model: 'cands:fake?tokens=25'}]\n"
        "model-parameters: [{name: capped, maxOutputTokens: 30}, {name: free}]\n"
        "prompts:\n  - {name: short, prompt: 'Write about <<topic>>.'}\n"
        "  - {name: long, prompt: 'Write a short, friendly paragraph for a newsletter about <<topic>> and why "
        "people like it.'}\n"
        f"dataset:\n{rows}\n"
    )

    def actual(experiment) -> tuple[int, int]:
        answers = outputs(experiment)
        calls = len(answers) + sum(o.evaluation.judge_calls for o in answers)
        tokens = sum(o.input_tokens + o.output_tokens for o in answers)
        tokens += sum(o.evaluation.input_tokens + o.evaluation.output_tokens for o in answers)
        return calls, tokens

    _, first_estimate = experiment_plan(config=config_of(path), workspace=workspace)
    first = run(path, workspace, owner)
    # 2 models × 2 parameter sets × 2 prompts × 3 rows = 24 answers, each judged once.
    assert first_estimate.calls == actual(first)[0] == 48

    # The estimate counts about 4 characters a token until it has seen what a model's provider reports; the fake
    # server counts words, so the second estimate is the one calibrated to it.
    _, estimate = experiment_plan(config=config_of(path), workspace=workspace)
    second = run(path, workspace, owner)
    calls, tokens = actual(second)
    assert estimate.calls == calls
    assert abs(estimate.tokens - tokens) <= 0.1 * tokens, (estimate.as_dict(), tokens)
    answers = outputs(second)
    answer_tokens = sum(o.input_tokens + o.output_tokens for o in answers)
    estimated = estimate.answers.input_tokens + estimate.answers.output_tokens
    assert abs(estimated - answer_tokens) <= 0.1 * answer_tokens
