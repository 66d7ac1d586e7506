"""The judge sees letters, never names: letters are assigned at random per round, every call gets a fresh
order, a seed reproduces both, and no model name or variant label ever reaches the judge's prompt."""

import re

import pytest

from judging.rubric import Metric
from judging.services import verdict_request
from judging.verdicts import verdict_execute
from tests.fixtures.judging_factories import CANDIDATES, answered_round, judged_group, make_judge
from tests.judging.scripts import relative

METRICS = [Metric(f"Metric {n}", 1, "Bad.", "Good.") for n in range(1, 6)]
TEXTS = ["alpha on tea", "beta on tea", "gamma on tea", "delta on tea"]
LABELS = ["Concise-XQ7", "Verbose-ZK9", "Formal-PW3", "Casual-MV5"]
SCORES = {"alpha": (5, "best"), "beta": (4, "good"), "gamma": (3, "fair"), "delta": (2, "poor")}


@pytest.fixture
def group(workspace, owner, connections):
    return judged_group(workspace, owner, count=4, labels=LABELS)


def judge_rounds(workspace, owner, fake_llm, group, *, seed, count=2, metrics=METRICS):
    """Rounds judged by one judge: their verdicts and what the judge was sent."""
    judge, scenario = make_judge(workspace, owner, fake_llm, metrics=[m.as_dict() for m in metrics], seed=seed)
    verdicts = []
    for _ in range(count):
        round_ = answered_round(group, owner, TEXTS)
        fake_llm.script(scenario, *(relative(SCORES, metric=metric) for metric in metrics))
        verdicts.append(verdict_execute(verdict_id=verdict_request(round=round_, user=owner, judge=judge).pk))
    return verdicts, fake_llm.requests(scenario)


def letter_by_text(verdict) -> dict[str, str]:
    return {entry.output.text: entry.letter for entry in verdict.outputs.select_related("output")}


def shown_texts(body: dict) -> list[str]:
    return re.findall(r'<answer letter="[A-Z]">\n(\w+) on tea', body["messages"][1]["content"])


def test_every_call_shows_the_answers_in_a_fresh_order(workspace, owner, fake_llm, group):
    verdicts, sent = judge_rounds(workspace, owner, fake_llm, group, seed=11, count=1)

    orders = [tuple(call["order"]) for call in verdicts[0].calls]
    assert len(orders) == 5 and len(set(orders)) > 1
    assert len({tuple(shown_texts(body)) for body in sent}) > 1


@pytest.mark.parametrize("seed", [None, 7])
def test_letters_are_assigned_at_random_per_round_even_with_a_fixed_seed(workspace, owner, fake_llm, group, seed):
    verdicts, _ = judge_rounds(workspace, owner, fake_llm, group, seed=seed, count=4, metrics=METRICS[:1])

    # Four rounds lettered alike by chance: (1/24)³, about 1 in 14 000.
    assert len({tuple(sorted(letter_by_text(verdict).items())) for verdict in verdicts}) > 1


def test_a_seed_reproduces_letters_and_orders_of_a_round(workspace, owner, fake_llm, group):
    [first], _ = judge_rounds(workspace, owner, fake_llm, group, seed=2024, count=1)
    judge = first.judge
    fake_llm.script(judge.model.split("::", 1)[1], *(relative(SCORES, metric=metric) for metric in METRICS))
    again = verdict_execute(verdict_id=verdict_request(round=first.round, user=owner, judge=judge).pk)

    assert again.status == first.status == "done"
    assert letter_by_text(again) == letter_by_text(first)
    assert [call["order"] for call in again.calls] == [call["order"] for call in first.calls]
    assert first.seed == again.seed == 2024


def test_the_prompt_never_contains_a_model_name_or_a_variant_label(workspace, owner, fake_llm, group):
    _, sent = judge_rounds(workspace, owner, fake_llm, group, seed=5)

    prompts = [message["content"] for body in sent for message in body["messages"]]
    assert len(sent) == 10
    for forbidden in [*LABELS, CANDIDATES, "gpt-4.1-mini", "Variant 1", "Variant 2"]:
        assert not any(forbidden in text for text in prompts), forbidden
    assert all("alpha on tea" in text for text in prompts if "<answer" in text)
