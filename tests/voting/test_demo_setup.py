"""`manage.py demo_setup` fills the demo workspace once, so every page has something on the first login: a prompt
library whose versions have standing, a dataset, a finished comparison with answers that follow their prompts, votes
and verdicts, a comparison of models that the leaderboard rates and that leaves rounds in the inbox, a judge and a
judged experiment."""

import io
import json

import pytest
from django.core.management import call_command

from compare.experiments.models import Evaluation, EvaluationStatus, Experiment
from compare.models import CompareGroup, Dataset, Mode, OutputStatus, RoundStatus
from compare.prompts.models import Prompt
from judging.models import JudgeConfig, VerdictStatus
from judging.selectors import group_judge_id
from lab.models import Workspace
from voting.inbox.selectors import InboxFilters, inbox_remaining
from voting.models import Vote
from voting.prompt_versions import prompt_standing
from voting.reports.leaderboard import leaderboard

pytestmark = pytest.mark.django_db(transaction=True)


def demo_setup(*args: str) -> str:
    out = io.StringIO()
    call_command("demo_setup", *args, stdout=out)
    return out.getvalue()


def test_the_demo_workspace_gets_a_finished_comparison_votes_a_judge_and_an_experiment():
    printed = demo_setup()

    assert "Filled the demo workspace" in printed and "as demo / demo-lab-2026" in printed
    dataset = Dataset.objects.get(name="Support questions")
    assert dataset.rows.count() == 3
    comparison = CompareGroup.objects.get(mode=Mode.PROMPTS, experiment__isnull=True)
    rounds = list(comparison.rounds.order_by("number"))
    assert [r.status for r in rounds] == [RoundStatus.DONE] * 3
    short = [o.text for r in rounds for o in r.outputs.filter(variant__label="Short")]
    friendly = [o.text for r in rounds for o in r.outputs.filter(variant__label="Friendly")]
    assert all(o.status == OutputStatus.OK for r in rounds for o in r.outputs.all())
    # The simulated writer follows each prompt: one sentence, or a list of steps, about the question.
    assert all(text.split("\n\n", 1)[1].count(".") == 1 for text in short)
    assert all(text.split("\n\n", 1)[1].startswith("1. ") for text in friendly)
    assert Vote.objects.filter(group=comparison).count() == 3
    # Its variants ran the current versions of the library's two prompts, so each version page has standing.
    prompts = list(Prompt.objects.order_by("name"))
    assert [p.name for p in prompts] == ["Support reply: friendly", "Support reply: short"]
    for prompt in prompts:
        assert prompt.versions.count() == 2 and prompt.current.number == 2
        current = prompt_standing(prompt, n_resamples=200)[-1]
        assert current.comparisons == 1 and current.win_rate is not None and current.rating is not None
    judge = JudgeConfig.objects.get(name="Simulated judge")
    assert group_judge_id(comparison.pk) == judge.pk
    assert [v.status for v in judge.verdicts.all()] == [VerdictStatus.DONE] * 3
    experiment = Experiment.objects.get()
    assert experiment.group.dataset == dataset
    evaluations = Evaluation.objects.filter(experiment=experiment)
    assert evaluations.count() == 6 and all(e.status == EvaluationStatus.DONE for e in evaluations)
    assert all(1 <= e.scale_score <= 5 for e in evaluations)
    json.dumps(experiment.estimate)  # stored as JSON


def test_the_leaderboard_rates_the_three_models_and_the_inbox_keeps_two_rounds_for_the_demo_user():
    demo_setup()

    workspace = Workspace.objects.get(name="Demo workspace")
    models = CompareGroup.objects.get(mode=Mode.MODELS)
    assert [r.status for r in models.rounds.all()] == [RoundStatus.DONE] * 6
    assert Vote.objects.filter(group=models).count() == 16  # the demo user's 4 and two teammates' 6 each
    board = leaderboard(workspace, n_resamples=200)
    assert {r["label"] for r in board["ratings"]} == {"simulated::writer", "simulated::coder", "simulated::instant"}
    assert not board["one_sided"]
    assert board["summary"].startswith("simulated::writer has the highest rating")
    demo = models.created_by
    assert inbox_remaining(workspace, demo, InboxFilters(group=models.pk)) == 2


def test_running_it_again_adds_nothing():
    demo_setup()
    again = demo_setup()
    assert "Filled" not in again and CompareGroup.objects.count() == 3 and Prompt.objects.count() == 2
