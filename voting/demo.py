"""The demo workspace's first contents, so every page shows something on a newcomer's first login: a prompt library
of two prompts with versions, a dataset, a finished comparison of those prompts with answers, votes and judge
verdicts, a comparison of three models voted on by two teammates (so the leaderboard rates the models and the
inbox has rounds left), the judge, and a judged experiment on that dataset.

Everything runs on the simulated models (offline, deterministic, labelled simulated), through the same services
and the same round and verdict code a worker runs, here in this process. It lives in voting, the app on top,
because it touches every app.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from django.contrib.auth import get_user_model

from compare.datasets.services import dataset_create
from compare.experiments.config import config_from_data
from compare.experiments.files import UploadedFiles
from compare.experiments.models import EVALUATION_UNFINISHED
from compare.experiments.runner import experiment_run_here
from compare.experiments.services import experiment_create, experiment_start
from compare.models import CompareGroup, Mode, Round
from compare.prompts.services import prompt_create, prompt_version_create
from compare.rounds.execution import round_run
from compare.rounds.start import round_start
from compare.services import group_create
from judging.models import Verdict
from judging.services import group_judge_set, judge_config_create, verdict_request
from judging.verdicts import verdict_execute
from lab.engine.runtime import runtime
from lab.models import Role, Workspace
from lab.services import membership_add

from .services import vote_cast

WRITER, JUDGE = "simulated::writer", "simulated::instant"
SYSTEM_PROMPT = "You answer customers of a small online shop."
QUESTIONS = [
    ("reset-password", "How can I reset my password?"),
    ("refund", "How do I get a refund for a double charge?"),
    ("export", "Can I export my data as a spreadsheet?"),
]
# The library: each prompt's versions, oldest first, with what changed; the last is current and is what the
# comparison of prompts runs, so each version's page shows how it fared.
PROMPTS = {
    "Support reply: short": [
        ("Answer briefly: {{question}}", "First draft."),
        ("Answer in one sentence: {{question}}", "One sentence: customers skim."),
    ],
    "Support reply: friendly": [
        ("Answer kindly: {{question}}", "First draft."),
        ("Answer warmly, as a list of steps: {{question}}", "Steps are easier to follow."),
    ],
}
VOTES = (0, 0, 1)  # which variant the demo user preferred in each round: the short one twice, the friendly once

# The comparison of models: one prompt, three simulated models, six customer messages.
MODELS = [("Writer", "simulated::writer"), ("Coder", "simulated::coder"), ("Instant", "simulated::instant")]
MESSAGES = [
    ("late-parcel", "My parcel is a week late. Where is it?"),
    ("wrong-size", "The shoes I got are the wrong size. Can I swap them?"),
    ("invoice", "I need an invoice with my company's name on it."),
    ("discount", "My discount code says it has expired, but the email says it runs until Friday."),
    ("cancel", "How do I cancel my subscription before it renews?"),
    ("address", "Can I change the delivery address of an order I placed an hour ago?"),
]
# Who preferred what in each round of the models comparison: a model's index in MODELS, "tie" or "all_bad". The demo
# user has voted on the first four rounds and leaves two for the inbox; every model wins somewhere, so the ratings
# fit the votes.
TEAMMATES = ("ada.demo", "ben.demo")
MODEL_VOTES = {
    None: (0, 0, 1, "tie"),  # the demo user
    "ada.demo": (0, 2, 0, 1, 0, "all_bad"),
    "ben.demo": (1, 0, 0, 2, "tie", 0),
}


def demo_seed(*, workspace: Workspace, user) -> bool:
    """Fill an empty workspace; False (and nothing done) when it already has comparisons."""
    if CompareGroup.objects.filter(workspace=workspace).exists():
        return False
    versions = _library(workspace, user)
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
        system_prompt=SYSTEM_PROMPT,
        variants=[
            {"label": "Short", "model": WRITER, "prompt_version": versions["Support reply: short"]},
            {"label": "Friendly", "model": WRITER, "prompt_version": versions["Support reply: friendly"]},
        ],
        dataset=dataset,
    )
    rounds = _run(round_start(group=group, user=user, dataset=dataset, enqueue=False))
    for round_, preferred in zip(rounds, VOTES, strict=True):
        _vote(round_, user, preferred)
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
    _models(workspace, user)
    _experiment(workspace, user)
    return True


def _library(workspace: Workspace, user) -> dict[str, object]:
    """The library's prompts with their versions; each prompt's current (last) version by name."""
    current = {}
    for name, versions in PROMPTS.items():
        (text, message), *later = versions
        prompt = prompt_create(
            workspace=workspace, user=user, name=name, text=text, system_prompt=SYSTEM_PROMPT, message=message
        )
        version = prompt.current
        for text, message in later:
            version = prompt_version_create(
                prompt=prompt, user=user, text=text, system_prompt=SYSTEM_PROMPT, message=message, parent=version
            )
        prompt.current = version
        prompt.save(update_fields=["current"])
        current[name] = version
    return current


def _models(workspace: Workspace, user) -> None:
    """A comparison of three models on six customer messages, voted on by the demo user and two teammates."""
    dataset = dataset_create(
        workspace=workspace,
        user=user,
        name="Customer messages",
        rows=[{"name": name, "vars": {"message": message}} for name, message in MESSAGES],
    )
    group = group_create(
        workspace=workspace,
        user=user,
        mode=Mode.MODELS,
        title="Which model replies best to customers?",
        system_prompt=SYSTEM_PROMPT,
        variants=[
            {"label": label, "model": model, "prompt": "Reply to this customer in two or three sentences: {{message}}"}
            for label, model in MODELS
        ],
        dataset=dataset,
    )
    rounds = _run(round_start(group=group, user=user, dataset=dataset, enqueue=False))
    voters = {None: user, **{name: _teammate(workspace, name) for name in TEAMMATES}}
    for name, choices in MODEL_VOTES.items():
        for round_, choice in zip(rounds, choices, strict=False):
            _vote(round_, voters[name], choice)


def _teammate(workspace: Workspace, username: str):
    """A demo teammate who votes: a viewer who cannot log in (no usable password)."""
    teammate, created = get_user_model().objects.get_or_create(username=username)
    if created:
        teammate.set_unusable_password()
        teammate.save(update_fields=["password"])
    membership_add(workspace=workspace, username=username, role=Role.VIEWER)
    return teammate


def _vote(round_: Round, user, choice: int | str) -> None:
    """`choice`: the index of the preferred variant (by position), or a verdict ("tie", "all_bad")."""
    if isinstance(choice, str):
        vote_cast(round=round_, user=user, verdict=choice)
        return
    outputs = list(round_.outputs.order_by("variant__position"))
    vote_cast(round=round_, user=user, output_id=outputs[choice].pk)


def _run(rounds: list[Round]) -> list[Round]:
    """Run the rounds at once on this process's engine, as a worker would one by one; the rounds, finished."""
    engine = runtime()
    engine.run(_run_all(engine, [round_.pk for round_ in rounds]))
    return list(Round.objects.filter(pk__in=[round_.pk for round_ in rounds]).order_by("number"))


async def _run_all(engine, round_ids: list[int]) -> None:
    await asyncio.gather(*(round_run(round_id=pk, engine=engine) for pk in round_ids))


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
