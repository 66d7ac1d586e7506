"""Baseline regression on the fake LLM server over HTTP: `manage.py experiment run FILE --baseline latest` exits 0
for an unchanged re-run and 4 for a seeded regression (a model whose answers the judge scores lower), with the
paired Wilcoxon test checked against scipy, the sample guard below ten differing pairs, and the page showing the
same verdict."""

import uuid

import numpy as np
import pytest
from scipy.stats import wilcoxon

from compare.experiments.baseline import baseline_compare, baseline_pin
from compare.models import CompareGroup
from tests.fixtures.experiments import run_command
from tests.judging.scripts import pointwise

pytestmark = pytest.mark.django_db(transaction=True)

ROWS = 12


def experiment_file(tmp_path, judge: str, answer: str, rows: int = ROWS):
    dataset = "\n".join(f"  - {{name: r{i}, vars: {{n: {i}}}}}" for i in range(1, rows + 1))
    path = tmp_path / f"{uuid.uuid4().hex[:6]}.yaml"
    path.write_text(
        "name: Gate\n"
        f"evaluation: {{type: 1-5, model: 'judge:{judge}'}}\n"
        f"models: [{{model: 'cands:fake?text={answer.replace(' ', '%20')}'}}]\n"
        "prompts: {ask: 'Answer question <<n>>.'}\n"
        f"dataset:\n{dataset}\n"
    )
    return path


def good_scores(fake_llm, judge: str, count: int) -> None:
    fake_llm.script(judge, *[pointwise({"Overall": (5, "Good.")}, about="a careful answer")] * count)


def test_an_unchanged_rerun_passes_and_a_seeded_regression_fails(
    workspace, connections, fake_llm, tmp_path, client, owner, api
):
    judge = f"fake?id=gate-{uuid.uuid4().hex[:8]}"
    good_scores(fake_llm, judge, 2 * ROWS)
    good = experiment_file(tmp_path, judge, "a careful answer")

    first = run_command("run", str(good))
    assert first.code == 0, first.err
    again = run_command("run", str(good), "--baseline", "latest")

    assert again.code == 0, again.err
    baseline = CompareGroup.objects.order_by("pk").first()
    assert f'  Baseline run   comparison {baseline.pk} "Gate"' in again.out
    assert "  Verdict        No change: all 12 paired scores are the same as the baseline's." in again.out
    assert "  Answers        0 of 12 pairs changed" in again.out

    baseline_pin(experiment=baseline.experiment, user=owner)
    worse = experiment_file(tmp_path, judge, "a sloppy reply")  # unscripted, the judge gives the lowest score
    regressed = run_command("run", str(worse), "--baseline", "latest")

    assert regressed.code == 4, regressed.err
    current = CompareGroup.objects.order_by("-pk").first().experiment
    assert current.baseline_id == baseline.experiment.pk  # the pinned run, not the newest
    expected = wilcoxon(np.full(ROWS, -1.0))  # scipy's own choice of method, as the report makes
    comparison = baseline_compare(baseline=baseline.experiment, current=current)
    assert comparison.test.p_value == pytest.approx(expected.pvalue)
    assert comparison.test.n_nonzero == ROWS and comparison.test.mean_difference == -1.0
    sentence = (
        "Significant regression: scores are lower by 1.000 on average; Wilcoxon signed-rank "
        f"p = {expected.pvalue:.4g} over 12 differing pairs (α = 0.05)."
    )
    assert f"  Verdict        {sentence}" in regressed.out
    assert "  Mean score     1.000 → 0.000 (-1.000)" in regressed.out
    assert "  Answers        12 of 12 pairs changed" in regressed.out
    assert f"Regression against the baseline: {sentence}" in regressed.err

    client.force_login(owner)
    page = client.get(f"/compare/{current.group_id}/experiment/baseline/").content.decode()
    assert sentence.replace("α", "&alpha;") in page or sentence in page
    assert '<del class="diff-del">careful answer</del>' in page and '<ins class="diff-ins">sloppy reply</ins>' in page

    body = api.get(f"/api/v1/experiments/{current.group_id}/baseline/").json()
    assert (body["baseline"], body["pinned"], body["verdict"], body["regression"]) == (
        baseline.pk,
        baseline.pk,
        "significant regression",
        True,
    )
    assert body["sentence"] == sentence and body["test"]["p_value"] == pytest.approx(expected.pvalue)
    assert body["pairs"][0]["current_html"] == 'a <ins class="diff-ins">sloppy reply</ins>'
    bad = api.post(f"/api/v1/experiments/{current.group_id}/baseline/", {"baseline": "nope"}, format="json")
    assert bad.status_code == 400 and "baseline" in bad.json()
    pinned = api.post(f"/api/v1/experiments/{current.group_id}/pin/")
    assert pinned.status_code == 201 and pinned.json()["pinned"] == current.group_id

    # The page's own forms: compare with another run, pin this one.
    rerun = CompareGroup.objects.order_by("pk")[1]  # the unchanged re-run
    client.post(f"/compare/{current.group_id}/experiment/baseline/choose/", {"baseline": str(rerun.pk)})
    current.refresh_from_db()
    assert current.baseline.group_id == rerun.pk
    client.post(f"/compare/{baseline.pk}/experiment/baseline/pin/")
    assert api.get(f"/api/v1/experiments/{current.group_id}/baseline/").json()["pinned"] == baseline.pk


def test_below_ten_differing_pairs_there_is_no_verdict_and_the_gate_passes(workspace, connections, fake_llm, tmp_path):
    judge = f"fake?id=few-{uuid.uuid4().hex[:8]}"
    good_scores(fake_llm, judge, 4)
    assert run_command("run", str(experiment_file(tmp_path, judge, "a careful answer", rows=4))).code == 0
    worse = experiment_file(tmp_path, judge, "a sloppy reply", rows=4)

    ran = run_command("run", str(worse), "--baseline", "latest")

    assert ran.code == 0, ran.err
    assert (
        "  Verdict        Not enough data for a verdict: 4 of 4 paired scores differ; the Wilcoxon signed-rank test "
        "needs at least 10, so 6 more."
    ) in ran.out


def test_a_baseline_that_does_not_exist_is_an_error_before_anything_runs(workspace, connections, tmp_path):
    path = experiment_file(tmp_path, "fake", "x", rows=1)
    ran = run_command("run", str(path), "--baseline", "latest")
    assert ran.code == 2 and '--baseline: No earlier run of "Gate" in this workspace to compare with.' in ran.err
    ran = run_command("run", str(path), "--baseline", "nope")
    assert ran.code == 2 and "--baseline: 'nope': give a comparison's id or 'latest'." in ran.err
    assert not CompareGroup.objects.exists()
