"""A budget is a cap (issue 38, item 4): `manage.py experiment run --budget` reserves each call's worst case before
it is sent, so the run never spends more than its cap at any concurrency, no call past the cap reaches the provider,
and the summary, the averages, the progress line, the page and the API give the same counts."""

from __future__ import annotations

import re
import subprocess
import sys
import time
from decimal import Decimal
from pathlib import Path

import pytest

from compare.experiments.budget import worst_case
from compare.experiments.models import Experiment
from compare.experiments.selectors import experiment_progress
from compare.models import Output, OutputStatus
from lab.providers.base import ModelInfo
from lab.services import connection_create
from tests.fixtures.experiments import run_command
from tests.fixtures.judging_factories import KEY
from tests.fixtures.processes import ROOT, child_env

pytestmark = pytest.mark.django_db(transaction=True)

ROWS = 40
# The fake server's `fake` costs $1 and $2 per million input and output tokens: an answer of 50 tokens to a prompt
# of three words costs $0.000103, and its worst case with maxOutputTokens 60 about $0.00014. Room for about 19.
BUDGET = Decimal("0.002")


def budgeted_file(tmp_path, model: str) -> str:
    path = tmp_path / "budget.yaml"
    rows = "\n".join(f"  - {{name: r{i}, vars: {{n: {i}}}}}" for i in range(1, ROWS + 1))
    path.write_text(
        f"models: [{{model: 'priced:{model}'}}]\n"
        "model-parameters: [{name: short, maxOutputTokens: 60}]\n"
        "prompts: {ask: 'Count to <<n>>.'}\n"
        f"dataset:\n{rows}\n"
    )
    return str(path)


@pytest.mark.parametrize("concurrency", [1, 4, 16])
def test_a_budgeted_run_never_spends_above_its_cap_and_its_counts_agree(
    concurrency, workspace, owner, fake_llm, tmp_path, client
):
    connection_create(workspace=workspace, name="priced", kind="openrouter", base_url=fake_llm.openai_url, api_key=KEY)
    model = fake_llm.model("fake", tokens=50)

    ran = run_command("run", budgeted_file(tmp_path, model), "--budget", str(BUDGET), "--concurrency", str(concurrency))

    assert ran.code == 3, ran.err + ran.out
    experiment = Experiment.objects.get()
    outputs = list(Output.objects.filter(round__group=experiment.group))
    made = [o for o in outputs if o.status == OutputStatus.OK]
    not_started = [o for o in outputs if o.status == OutputStatus.CANCELLED]
    assert len(made) + len(not_started) == ROWS and 0 < len(made) < ROWS
    spent = sum(o.cost for o in made)
    assert spent <= BUDGET
    # The ledger agrees with the answers' rows, holds nothing back once the run is over, and no call it refused
    # reached the provider.
    assert (experiment.budget_spent, experiment.budget_reserved) == (spent, 0)
    assert fake_llm.scenario(model)["requests"] == len(made)
    assert all(o.error == "Not started: the budget cap was reached." for o in not_started)
    # It stopped only when the next call's worst case no longer fitted.
    [reason] = re.findall(r"the next call could cost up to \$([\d.]+)\.", experiment.stopped_reason)
    assert spent + Decimal(reason) > BUDGET

    summary = f"{ROWS} answers, 0 failed, {len(not_started)} not started; spent ${spent:.6f}."
    assert summary in ran.err
    progress_lines = [line for line in ran.err.splitlines() if line.startswith("[")]
    assert f"] {len(made)}/{ROWS} calls · {len(not_started)} not started · " in progress_lines[-1]
    by_model = ran.out.split("Averages by model")[1].splitlines()
    assert re.fullmatch(r"Model\s+Answers\s+Failed\s+Not started\s+Gen time\s+Tokens\s+Eval time\s+Cost", by_model[1])
    assert re.match(rf"\S+\s+{ROWS}\s+0\s+{len(not_started)}\s", by_model[3]), by_model[3]

    client.force_login(owner)
    progress = client.get(f"/api/v1/experiments/{experiment.group_id}/").json()["progress"]
    assert (progress["done"], progress["not_started"], progress["total"], progress["finished"]) == (
        len(made),
        len(not_started),
        ROWS,
        True,
    )
    assert Decimal(str(progress["spent"])) == spent
    [average] = client.get(f"/api/v1/experiments/{experiment.group_id}/").json()["averages"]["model"]
    assert (average["answers"], average["failed"], average["not_started"]) == (ROWS, 0, len(not_started))
    page = client.get(f"/compare/{experiment.group_id}/experiment/").content.decode()
    assert f"{len(made)} of {ROWS} calls · {len(not_started)} not started · finished" in page
    assert f'<td class="num">{ROWS}</td><td class="num">0</td><td class="num">{len(not_started)}</td>' in page


def test_the_cap_holds_across_processes(workspace, fake_llm, tmp_path):
    # Two processes of one run, each with calls in flight at once: only the ledger in the database keeps them
    # together under the cap.
    connection_create(workspace=workspace, name="priced", kind="openrouter", base_url=fake_llm.openai_url, api_key=KEY)
    model = fake_llm.model("fake", tokens=50, ttft_ms=300)
    command = [sys.executable, "manage.py", "experiment", "run", budgeted_file(tmp_path, model)]
    command += ["--budget", str(BUDGET), "--processes", "2", "--concurrency", "16"]
    ran = subprocess.run(command, cwd=ROOT, env=child_env(), capture_output=True, text=True, timeout=300)

    assert ran.returncode == 3, ran.stderr
    experiment = Experiment.objects.get()
    outputs = list(Output.objects.filter(round__group=experiment.group))
    made = [o for o in outputs if o.status == OutputStatus.OK]
    spent = sum(o.cost for o in made)
    assert 0 < len(made) < ROWS and spent <= BUDGET
    assert (experiment.budget_spent, experiment.budget_reserved) == (spent, 0)
    seen = fake_llm.scenario(model)
    assert seen["requests"] == len(made) and seen["max_in_flight"] > 1
    assert f"{ROWS} answers, 0 failed, {ROWS - len(made)} not started; spent ${spent:.6f}." in ran.stderr


def test_judge_evaluations_reserve_their_worst_case_too(workspace, fake_llm, tmp_path):
    # Each evaluation reserves the judge's two attempts at its maximum output (4,096 tokens: about $0.0166), far
    # above what it costs: the cap lets evaluations through while it has that much room, then stops the run.
    connection_create(workspace=workspace, name="priced", kind="openrouter", base_url=fake_llm.openai_url, api_key=KEY)
    connection_create(workspace=workspace, name="judge", kind="openrouter", base_url=fake_llm.openai_url, api_key=KEY)
    model = fake_llm.model("fake", tokens=50)
    path = Path(budgeted_file(tmp_path, model))
    path.write_text("evaluation: {type: 1-5, model: 'judge:fake'}\n" + path.read_text())

    ran = run_command("run", str(path), "--budget", "0.03", "--concurrency", "4")

    assert ran.code == 3, ran.err + ran.out
    experiment = Experiment.objects.get()
    outputs = Output.objects.filter(round__group=experiment.group)
    evaluations = experiment.evaluations.all()
    spent = sum(o.cost for o in outputs if o.cost is not None) + sum(e.cost for e in evaluations if e.cost)
    judged = [e for e in evaluations if e.judge_calls]
    assert judged and len(judged) < ROWS and spent <= Decimal("0.03")
    assert (experiment.budget_spent, experiment.budget_reserved) == (spent, 0)
    progress = experiment_progress(experiment)
    assert progress["finished"] and progress["done"] + progress["not_started"] == progress["total"] == 2 * ROWS
    assert progress["evaluations_done"] == len(judged)


@pytest.mark.services
def test_the_cap_holds_when_a_worker_runs_the_rounds(workspace, api, fake_llm, tmp_path, celery_worker_process):
    # Started through the API: the worker process runs the rounds, its calls reserving against the same ledger.
    connection_create(workspace=workspace, name="priced", kind="openrouter", base_url=fake_llm.openai_url, api_key=KEY)
    model = fake_llm.model("fake", tokens=50)
    file = Path(budgeted_file(tmp_path, model)).read_text()
    body = {"workspace": workspace.pk, "file": file, "format": "yaml", "budget": str(BUDGET)}
    response = api.post("/api/v1/experiments/", body, format="json")
    assert response.status_code == 201, response.json()

    experiment = Experiment.objects.get()
    progress = wait_until_finished(experiment)
    experiment.refresh_from_db()
    made = Output.objects.filter(round__group=experiment.group, status=OutputStatus.OK)
    spent = sum(o.cost for o in made)
    assert 0 < made.count() < ROWS and spent <= BUDGET
    assert (experiment.budget_spent, experiment.budget_reserved) == (spent, 0)
    assert fake_llm.scenario(model)["requests"] == made.count()
    assert (progress["done"], progress["not_started"], progress["total"]) == (made.count(), ROWS - made.count(), ROWS)
    assert experiment.stopped_reason.startswith(f"Stopped at the budget cap of ${BUDGET}: ${spent.normalize()} spent")


def wait_until_finished(experiment: Experiment, timeout_s: float = 60) -> dict:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        progress = experiment_progress(experiment)
        if progress["finished"]:
            return progress
        time.sleep(0.1)
    pytest.fail(f"The experiment did not finish: {experiment_progress(experiment)}")


def test_a_budget_needs_every_model_s_price(workspace, fake_llm, tmp_path):
    connection_create(workspace=workspace, name="unpriced", kind="openai", base_url=fake_llm.openai_url, api_key=KEY)
    path = tmp_path / "unpriced.yaml"
    path.write_text("models: [{model: 'unpriced:fake'}]\nprompts: {ask: 'Hello.'}\n")

    ran = run_command("run", str(path), "--budget", "1")

    assert ran.code == 2, ran.err + ran.out
    assert "1 of the 1 calls use a model without a known price, so a budget cap cannot hold them" in ran.err
    assert not Experiment.objects.exists()


def test_a_call_s_worst_case_is_its_max_tokens_at_the_model_s_price_or_the_stated_estimate():
    info = ModelInfo(id="m", input_price_per_mtok=1.0, output_price_per_mtok=2.0, max_output_tokens=1000)
    # 12 characters and one message: at most 20 input tokens; 60 output tokens.
    assert worst_case(characters=12, messages=1, max_tokens=60, info=info) == Decimal("0.00014")
    # Without max_tokens: the model's maximum output, else the stated 4,096.
    assert worst_case(characters=12, messages=1, max_tokens=None, info=info) == Decimal("0.00202")
    unbounded = ModelInfo(id="m", input_price_per_mtok=1.0, output_price_per_mtok=2.0)
    assert worst_case(characters=12, messages=1, max_tokens=None, info=unbounded) == Decimal("0.008212")
    assert worst_case(characters=12, messages=1, max_tokens=60, info=ModelInfo(id="m")) is None
