"""`manage.py experiment` against the fake LLM server over HTTP: the minimal file's output (its structure, not its
timings), a dry run that saves nothing, exit statuses for failed calls and the budget cap, and export → run giving
the same combinations on the same rows."""

import logging
import re

import pytest
from celery import signals
from django.test import override_settings

from compare.models import CompareGroup, Output, OutputStatus, RoundStatus
from compare.rounds.jobs import ROUND
from lab.jobs.kinds import kind
from lab.services import connection_create
from tests.fixtures.experiments import run_command, sample
from tests.fixtures.judging_factories import KEY

pytestmark = pytest.mark.django_db(transaction=True)

NUMBER = r"[\d.,]+"
SITE = "http://lab.test:8200"  # links are printed whole, from SITE_URL


def lines_matching(text: str, *patterns: str) -> None:
    """Each pattern matches a line, in this order, not necessarily adjacent."""
    lines = iter(text.splitlines())
    for pattern in patterns:
        assert any(re.fullmatch(pattern, line) for line in lines), f"no line matches {pattern!r} (in order):\n{text}"


@override_settings(SITE_URL=SITE)
def test_the_minimal_file_runs_and_prints_the_estimate_each_answer_and_the_averages(workspace, connections, caplog):
    caplog.set_level(logging.INFO)
    path = sample("minimal.yaml")
    ran = run_command("run", str(path), "--workspace", str(workspace.pk))

    assert ran.code == 0, ran.err
    group = CompareGroup.objects.get()
    n = NUMBER
    lines_matching(
        ran.out,
        re.escape(f'Experiment "Minimal greeting" from {path} in workspace "Team A"'),
        "Estimate",
        re.escape("  Combinations  1 (1 model × 1 parameter set × 1 prompt) on 1 dataset row"),
        re.escape("  Calls         2: 1 answer, 1 evaluation"),
        rf"  Tokens        ~{n}: answers {n} in \+ 20 out, evaluations {n} in \+ {n} out",
        # The fake model has no known price on an openai-kind connection: its answer's cost is unknown, never $0.
        rf"  Cost          ~\${n} \+ 1 call of unknown price: answers unknown, evaluations \${n}",
        re.escape("Running 1 round (one per dataset row), each connection at its limit"),
        "Results",
        # Toor's layout: names right-aligned to 15 characters, figures to 35, the model as the file wrote it.
        re.escape("│          Model: cands:fake?tokens=20"),
        re.escape("│     Parameters: precise"),
        re.escape("│         Prompt: greet"),
        re.escape("│        Dataset: ada"),
        re.escape("│          Score: 1"),  # the fake judge, unscripted, gives the lowest score it may
        re.escape("│         Reason: fake"),
        r"│             Prompt generation time: \d+ ms",
        r"│     Prompt generation input tokens: \d+",
        r"│    Prompt generation output tokens: 20",
        r"│             Prompt generation cost: unknown",
        r"│                    Evaluation time: \d+ ms",
        r"│            Evaluation input tokens: \d+",
        r"│           Evaluation output tokens: \d+",
        rf"│                    Evaluation cost: \${n}",
        " " + "─" * 32,
        r"Model\s+Parameters\s+Prompt\s+Dataset\s+Score\s+Gen time\s+Tokens\s+Eval time\s+Cost",
        "─+",
        rf"cands:fake\?tokens=20\s+precise\s+greet\s+ada\s+1\s+\d+ ms\s+\d+\s+\d+ ms"
        rf"\s+\${n} \+ 1 call of unknown price",
        "Averages by model",
        r"Model\s+Answers\s+Failed\s+Score\s+Gen time\s+Tokens\s+Eval time\s+Cost",
        rf"cands:fake\?tokens=20\s+1\s+0\s+1\s+\d+ ms\s+\d+\s+\d+ ms\s+\${n} \+ 1 call of unknown price",
        "Averages by parameters",
        r"precise\s+1\s+0\s+1\s.*",
        "Averages by prompt",
        r"greet\s+1\s+0\s+1\s.*",
        "Averages by dataset row",
        r"ada\s+1\s+0\s+1\s.*",
        re.escape(f'Saved as comparison {group.pk} "Minimal greeting": {SITE}/compare/{group.pk}/experiment/'),
        rf"Done: 1 answer, 0 failed; spent \${n} \+ 1 call of unknown price\.",
    )
    # The log lines of every HTTP request (httpx) and of a round another process ran stay off the terminal.
    assert not [
        r for r in caplog.records if r.name in ("httpx", "compare.rounds.execution") and r.levelno < logging.WARNING
    ]
    assert re.search(rf"\[#{{30}}\] 2/2 calls · {n} calls/s · 0:00:00 left$", ran.err.strip())
    assert group.mode == "custom" and group.rounds.get().status == RoundStatus.DONE


def test_the_command_runs_its_rounds_itself_and_sends_none_of_them_to_the_workers(workspace, connections):
    published = []

    def note(sender, body, **kwargs):
        published.append(sender)

    signals.before_task_publish.connect(note)
    try:
        ran = run_command("run", str(sample("minimal.yaml")), "--workspace", str(workspace.pk))
    finally:
        signals.before_task_publish.disconnect(note)

    assert ran.code == 0, ran.err
    assert kind(ROUND).task not in published  # (its answer's evaluation is offered to them as usual)
    assert CompareGroup.objects.get().rounds.get().status == RoundStatus.DONE


def test_a_dry_run_prints_the_estimate_and_saves_nothing(workspace, connections):
    ran = run_command("run", str(sample("classifier.yaml")), "--dry-run")
    assert ran.code == 0, ran.err
    assert "  Calls         8: 4 answers, 4 evaluations" in ran.out
    assert ran.out.rstrip().endswith("Dry run: nothing was run or saved.")
    assert not CompareGroup.objects.exists()


def test_failed_calls_exit_non_zero_and_say_which(workspace, connections, tmp_path):
    path = tmp_path / "failing.yaml"
    path.write_text(
        "models: [{model: 'cands:fake?tokens=3'}, {model: 'cands:fake?fault=401'}]\nprompts: {ask: Say hi.}\n"
    )
    ran = run_command("run", str(path))
    assert ran.code == 1
    assert "Failed: cands::fake?fault=401 · default · ask · round 1: " in ran.err
    assert "Some calls failed: 2 answers, 1 failed" in ran.err
    statuses = sorted(CompareGroup.objects.get().rounds.get().outputs.values_list("status", flat=True))
    assert statuses == [OutputStatus.ERROR, OutputStatus.OK]


def test_a_row_too_long_for_its_model_exits_2_naming_it_before_any_call(workspace, fake_llm, tmp_path):
    connection_create(workspace=workspace, name="or", kind="openrouter", base_url=fake_llm.openai_url, api_key=KEY)
    model = fake_llm.model(name="fake-free")  # a context of 8,192 tokens
    rows = "\n".join(f"  - {{name: r{i}, vars: {{n: '{'word ' * 8000 if i == 40 else i}'}}}}" for i in range(1, 51))
    path = tmp_path / "long.yaml"
    path.write_text(f"models: [{{model: 'or:{model}'}}]\nprompts: {{ask: 'Count to <<n>>.'}}\ndataset:\n{rows}\n")

    ran = run_command("run", str(path))

    assert ran.code == 2, ran.err
    assert "Row 40 (r40): " in ran.err and "more than the context of or::fake-free" in ran.err
    assert "Traceback" not in ran.err
    assert fake_llm.scenario(model)["requests"] == 0


def test_a_cap_below_one_call_s_worst_case_makes_no_call_and_says_so(workspace, fake_llm, tmp_path):
    # A priced model (the fake server's `fake` at $1 and $2 per million tokens, on an OpenRouter-kind connection),
    # without maxOutputTokens: each call may write the model's 4,096 tokens. (tests/compare/test_experiment_budget.py
    # runs one that makes some calls, at several concurrencies.)
    connection_create(workspace=workspace, name="priced", kind="openrouter", base_url=fake_llm.openai_url, api_key=KEY)
    model = fake_llm.model("fake", tokens=50)
    path = tmp_path / "budget.yaml"
    rows = "\n".join(f"  - {{name: r{i}, vars: {{n: {i}}}}}" for i in range(1, 6))
    path.write_text(f"models: [{{model: 'priced:{model}'}}]\nprompts: {{ask: 'Count to <<n>>.'}}\ndataset:\n{rows}\n")

    ran = run_command("run", str(path), "--budget", "0.00005", "--concurrency", "1")

    assert ran.code == 3, ran.err
    assert re.search(
        r"Stopped at the budget cap of \$0\.00005: \$0 spent, and the next call could cost up to \$0\.0082\d+\. "
        r"Calls not yet started were not made\. 5 answers, 0 failed, 5 not started; spent \$0\.000000\.",
        ran.err,
    ), ran.err
    assert fake_llm.scenario(model)["requests"] == 0
    group = CompareGroup.objects.get()
    assert set(group.rounds.values_list("status", flat=True)) <= {RoundStatus.DONE, RoundStatus.CANCELLED}
    assert set(Output.objects.values_list("status", flat=True)) == {OutputStatus.CANCELLED}


def test_export_then_run_gives_the_same_combinations_on_the_same_rows(workspace, connections, tmp_path):
    first = run_command("run", str(sample("with_files/experiment.json")))
    assert first.code == 0, first.err
    original = CompareGroup.objects.get()
    exported = run_command("export", str(original.pk))
    path = tmp_path / "again.yaml"
    path.write_text(exported.out)

    again = run_command("run", str(path))

    assert again.code == 0, again.err
    copy = CompareGroup.objects.exclude(pk=original.pk).get()

    def combinations(group):
        return [(v.model, v.params, v.prompt, v.variables) for v in group.variants.order_by("position")]

    def rows(group):
        return [(row.name, row.vars) for row in group.dataset.rows.order_by("position")]

    assert len(combinations(original)) == 3 and len(rows(original)) == 3
    assert combinations(copy) == combinations(original) and rows(copy) == rows(original)
    assert copy.experiment.config["evaluation"] == original.experiment.config["evaluation"]
    assert run_command("export", str(copy.pk)).out == exported.out
    assert "combinations:" in exported.out and "{{question}}" in exported.out
