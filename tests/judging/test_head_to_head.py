"""When the top two end within 0.15 a head-to-head call decides, asked in both orders; a win counts only when
both orders agree, otherwise the verdict is a tie."""

import pytest

from judging.models import VerdictStatus
from judging.rubric import Metric
from judging.services import verdict_request
from judging.verdicts import verdict_execute
from tests.fixtures.judging_factories import answered_round, judged_group, make_judge
from tests.judging.scripts import relative, winner

QUALITY = Metric("Quality", 1, "Poor.", "Excellent.")
# On 1–10, 8 and 7 are 0.78 and 0.67 once scaled: 0.11 apart, within 0.15.
CLOSE = relative({"alpha": (8, "good"), "beta": (7, "nearly as good"), "gamma": (2, "poor")}, metric=QUALITY)


@pytest.fixture
def round_(workspace, owner, connections):
    group = judged_group(workspace, owner, count=3)
    return answered_round(group, owner, ["alpha on tea", "beta on tea", "gamma on tea"])


def judge_round(workspace, owner, fake_llm, round_, *replies):
    judge, scenario = make_judge(workspace, owner, fake_llm, scale="1-10", metrics=[QUALITY.as_dict()])
    fake_llm.script(scenario, *replies)
    verdict = verdict_execute(verdict_id=verdict_request(round=round_, user=owner, judge=judge).pk)
    return verdict, fake_llm.requests(scenario)


def test_a_close_call_goes_to_a_head_to_head_in_both_orders(workspace, owner, fake_llm, round_):
    verdict, sent = judge_round(workspace, owner, fake_llm, round_, CLOSE, winner("letter:beta"), winner("letter:beta"))

    assert verdict.status == VerdictStatus.DONE
    assert verdict.winner.text == "beta on tea"  # second on scores, first head to head
    assert verdict.decided_by == "head_to_head"
    head_to_head = [
        body["messages"][1]["content"] for body in sent if "scored almost the same" in body["messages"][1]["content"]
    ]
    assert len(head_to_head) == 2
    assert all("gamma" not in text for text in head_to_head)  # only the top two
    first_shown = [text.index("alpha") < text.index("beta") for text in head_to_head]
    assert sorted(first_shown) == [False, True]  # once each way round
    [record] = [pair for pair in verdict.pairs if pair["metric"] == "overall"]
    assert record["outcome"] == verdict.winner_id


def test_a_head_to_head_that_changes_with_the_order_is_a_tie(workspace, owner, fake_llm, round_):
    verdict, _ = judge_round(workspace, owner, fake_llm, round_, CLOSE, winner("shown:1"), winner("shown:1"))

    assert verdict.status == VerdictStatus.DONE
    assert verdict.tie and verdict.winner is None
    [record] = verdict.pairs
    assert record["call_1"] != record["call_2"] and record["outcome"] == "tie"


def test_a_clear_gap_needs_no_head_to_head(workspace, owner, fake_llm, round_):
    clear = relative({"alpha": (9, "best"), "beta": (6, "ok"), "gamma": (2, "poor")}, metric=QUALITY)

    verdict, sent = judge_round(workspace, owner, fake_llm, round_, clear)

    assert (verdict.decided_by, verdict.winner.text, len(sent)) == ("scores", "alpha on tea", 1)


TIED = relative({"alpha": (8, "good"), "beta": (8, "as good"), "gamma": (8, "as good too")}, metric=QUALITY)


def test_every_answer_tied_for_the_top_meets_every_other_head_to_head(workspace, owner, fake_llm, round_):
    # beta wins each meeting it is in (both orders); alpha beats gamma.
    beta_wins = [winner("letter:beta") | {"match": "beta on tea"}] * 4
    alpha_wins = [winner("letter:alpha")] * 2
    verdict, sent = judge_round(workspace, owner, fake_llm, round_, TIED, *beta_wins, *alpha_wins)

    assert verdict.status == VerdictStatus.DONE
    assert (verdict.decided_by, verdict.winner.text) == ("head_to_head", "beta on tea")
    head_to_head = [
        body["messages"][1]["content"] for body in sent if "scored almost the same" in body["messages"][1]["content"]
    ]
    assert len(head_to_head) == 6  # three pairs, each in both orders
    met = sorted(
        tuple(sorted(word for word in ("alpha", "beta", "gamma") if f"{word} on tea" in text)) for text in head_to_head
    )
    assert met == [("alpha", "beta")] * 2 + [("alpha", "gamma")] * 2 + [("beta", "gamma")] * 2
    records = [pair for pair in verdict.pairs if pair["metric"] == "overall"]
    assert len(records) == 3


def test_a_custom_prompt_without_the_scale_placeholder_still_carries_the_head_to_head_question(
    workspace, owner, fake_llm, round_
):
    # A binary judge's custom prompt needs no {{scoring_scale}}, which is where the question used to go.
    custom = "Judge the answers.\n{{prompt}}\n{{response}}"
    judge, scenario = make_judge(workspace, owner, fake_llm, scale="binary", metrics=[QUALITY.as_dict()], prompt=custom)
    scores = relative({"alpha": (1, "passes"), "beta": (1, "passes"), "gamma": (0, "fails")})
    fake_llm.script(scenario, scores, winner("letter:beta"), winner("letter:beta"))
    verdict = verdict_execute(verdict_id=verdict_request(round=round_, user=owner, judge=judge).pk)

    sent = [body["messages"][1]["content"] for body in fake_llm.requests(scenario)]
    head_to_head = [text for text in sent if "These two answers scored almost the same" in text]
    assert len(head_to_head) == 2 and all(text.startswith("Judge the answers.") for text in head_to_head)
    assert (verdict.decided_by, verdict.winner.text) == ("head_to_head", "beta on tea")
