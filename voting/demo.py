"""The demo workspace's first contents, so every page shows something on a newcomer's first login: a dataset, a
finished comparison with answers, votes and judge verdicts, the judge, and a judged experiment on that dataset.

Everything runs on the simulated models (offline, deterministic, labelled simulated), through the same services
and the same round and verdict code a worker runs, here in this process. It lives in voting, the app on top,
because it touches every app.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from compare.execution import round_execute
from compare.experiments.config import config_from_data
from compare.experiments.files import UploadedFiles
from compare.experiments.models import EVALUATION_UNFINISHED
from compare.experiments.runner import experiment_run_here
from compare.experiments.services import experiment_create, experiment_start
from compare.models import CompareGroup, Mode, Round
from compare.services import dataset_create, group_create, round_start
from judging.models import Verdict
from judging.services import group_judge_set, judge_config_create, verdict_request
from judging.verdicts import verdict_execute
from lab.models import Workspace

from .services import vote_cast

WRITER, JUDGE = "simulated::writer", "simulated::instant"
QUESTIONS = [
    ("reset-password", "How can I reset my password?"),
    ("refund", "How do I get a refund for a double charge?"),
    ("export", "Can I export my data as a spreadsheet?"),
]
VOTES = (0, 0, 1)  # which variant the demo user preferred in each round: the short one twice, the friendly once


def demo_seed(*, workspace: Workspace, user) -> bool:
    """Fill an empty workspace; False (and nothing done) when it already has comparisons."""
    if CompareGroup.objects.filter(workspace=workspace).exists():
        return False
    dataset = dataset_create(
        workspace=workspace,
        user=user,
        name="Support questions",
        rows=[{"name": name, "vars": {"question": question}} for name, question in QUESTIONS],
    )
    group = group_create(
        workspace=workspace,
        user=user,
        mode=Mode.PROMPTS,
        title="Support replies: short or friendly?",
        system_prompt="You answer customers of a small online shop.",
        variants=[
            {"label": "Short", "model": WRITER, "prompt": "Answer in one sentence: {{question}}"},
            {"label": "Friendly", "model": WRITER, "prompt": "Answer warmly, as a list of steps: {{question}}"},
        ],
        dataset=dataset,
    )
    rounds = round_start(group=group, user=user, dataset=dataset)
    for round_ in rounds:
        round_execute(round_id=round_.pk)
        _until(lambda pk=round_.pk: Round.objects.get(pk=pk).is_finished)  # a running worker may have taken it
    for round_, preferred in zip(rounds, VOTES, strict=True):
        round_.refresh_from_db()
        outputs = list(round_.outputs.order_by("variant__position"))
        vote_cast(round=round_, user=user, output_id=outputs[preferred].pk)
    judge = judge_config_create(
        workspace=workspace,
        user=user,
        name="Simulated judge",
        model=JUDGE,
        scale="1-5",
        metrics=[
            {"name": "Helpfulness", "weight": 2, "low": "Does not help.", "high": "Solves the problem."},
            {"name": "Clarity", "weight": 1, "low": "Hard to follow.", "high": "Clear at once."},
        ],
    )
    for round_ in rounds:
        verdict = verdict_request(round=round_, user=user, judge=judge)
        verdict_execute(verdict_id=verdict.pk)
        _until(lambda pk=verdict.pk: Verdict.objects.get(pk=pk).is_finished)  # a running worker may have taken it
    group_judge_set(group=group, judge=judge)
    _experiment(workspace, user)
    return True


def _until(done: Callable[[], bool], timeout_s: float = 60) -> None:
    """Wait for work a worker took instead of this process (its claim in the database let only one run it)."""
    deadline = time.monotonic() + timeout_s
    while not done() and time.monotonic() < deadline:
        time.sleep(0.1)


def _experiment(workspace: Workspace, user) -> None:
    data = {
        "name": "Which model answers support questions best?",
        "evaluation": {"type": "1-5", "model": "simulated:instant"},
        "models": [{"model": "simulated:writer"}, {"model": "simulated:coder"}],
        "model-parameters": [{"name": "default", "temperature": 0.2}],
        "prompts": [{"name": "support", "prompt": "Answer clearly, in one sentence: <<question>>"}],
        "dataset": [{"dataset": "Support questions"}],
    }
    config = config_from_data(data, source="demo.experiment.yaml", files=UploadedFiles({}))
    experiment = experiment_create(workspace=workspace, user=user, config=config, source="demo.experiment.yaml")
    experiment_start(experiment=experiment, user=user)
    experiment_run_here(experiment=experiment, concurrency=1, on_progress=lambda progress: None)
    _until(lambda: not experiment.evaluations.filter(status__in=EVALUATION_UNFINISHED).exists())
