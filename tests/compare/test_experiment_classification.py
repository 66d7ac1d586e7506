"""An experiment file may evaluate with Evidently's classification templates (`binary-classification`,
`multiclass-classification`, with `input-columns`): each answer gets a category, and the results count each
model's, parameter set's, prompt's and row's answers per category with Wilson intervals."""

import json

import pytest
from statsmodels.stats.proportion import proportion_confint

from compare.experiments.models import Evaluation, EvaluationStatus, Experiment
from compare.experiments.results import experiment_results
from tests.fixtures.experiments import run_command

pytestmark = pytest.mark.django_db(transaction=True)


def file_for(tmp_path, judge: str, evaluation: str) -> str:
    rows = "\n".join(
        f"  - {{name: r{i}, vars: {{question: 'Question {i}?', audience: 'beginners'}}}}" for i in range(5)
    )
    text = (
        f"evaluation:\n  model: 'judge:{judge}'\n{evaluation}"
        "models:\n  - model: 'cands:fake?text=Short%20answer.'\n"
        "  - model: 'cands:fake?text=A%20long%20rambling%20answer'\n"
        "prompts:\n  - name: ask\n    prompt: 'Answer for <<audience>>: <<question>>'\n"
        f"dataset:\n{rows}\n"
    )
    path = tmp_path / "classify.experiment.yaml"
    path.write_text(text)
    return str(path)


BINARY = (
    "  type: binary-classification\n"
    "  criteria: Is the answer concise enough for {{audience}}?\n"
    "  target: concise\n  non-target: verbose\n  uncertainty: non-target\n"
    "  input-columns: [audience]\n"
)


def test_a_binary_classification_evaluation_records_categories_and_their_shares(
    workspace, connections, fake_llm, tmp_path
):
    judge = fake_llm.model()
    concise = {"text": json.dumps({"reasoning": "short", "category": "concise"}), "match": "Short answer."}
    verbose = {"text": json.dumps({"reasoning": "long", "category": "verbose"}), "match": "rambling"}
    fake_llm.script(judge, *[concise] * 5, *[verbose] * 4, concise)

    ran = run_command("run", file_for(tmp_path, judge, BINARY))

    assert ran.code == 0, ran.err + ran.out
    evaluations = Evaluation.objects.select_related("output__variant")
    assert all(e.status == EvaluationStatus.DONE for e in evaluations)
    asked = fake_llm.requests(judge)[0]["messages"][1]["content"]
    assert "Criteria:\nIs the answer concise enough for beginners?" in asked
    assert '<column name="audience">\nbeginners\n</column>' in asked
    assert 'If you are not sure, answer "verbose".' in asked
    results = experiment_results(Experiment.objects.get())
    by_model = {a.key: a.categories for a in results.averages["model"]}
    long_one = by_model["cands:fake?text=A%20long%20rambling%20answer"]
    assert (long_one["verbose"].count, long_one["concise"].count, long_one["verbose"].classified) == (4, 1, 5)
    low, high = proportion_confint(4, 5, alpha=0.05, method="wilson")
    assert long_one["verbose"].ci_low == pytest.approx(low) and long_one["verbose"].ci_high == pytest.approx(high)
    assert "│       Category: concise" in ran.out
    assert "verbose 4/5 (80%, 95% interval 38%–96%)" in ran.out


def test_a_multiclass_evaluation_needs_its_categories(workspace, connections, fake_llm, tmp_path):
    evaluation = "  type: multiclass-classification\n  criteria: What is the tone?\n  categories: {friendly: warm}\n"

    ran = run_command("run", file_for(tmp_path, fake_llm.model(), evaluation))

    assert ran.code == 2
    assert "evaluation: categories: 2 to 10 categories" in ran.err
