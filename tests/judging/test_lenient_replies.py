"""Replies are read strictly by default (JSON only, one code fence at most); a judge set to lenient replies reads
the largest JSON object in a reply, so a chatty judge's verdict still counts."""

import json

import pytest

from judging.models import VerdictStatus
from judging.replies import BadReply, largest_object, parse_json
from judging.rubric import Metric
from judging.services import verdict_request
from judging.verdicts import verdict_execute
from tests.fixtures.judging_factories import answered_round, judged_group, make_judge

QUALITY = Metric("Quality", 1, "Poor.", "Excellent.")
SCORES = {
    "scores": {"{{letter:alpha}}": {"reason": "best", "score": 5}, "{{letter:beta}}": {"reason": "ok", "score": 2}}
}
CHATTY = f"Sure! Here is my verdict: {json.dumps(SCORES)} I hope {{this}} helps."


def test_the_largest_json_object_is_read_and_prose_around_it_ignored():
    text = 'Note {"a": 1}. Verdict: {"scores": {"A": {"reason": "x", "score": 3}}} end {"b": 2}'
    assert largest_object(text) == {"scores": {"A": {"reason": "x", "score": 3}}}
    assert parse_json(text, lenient=True) == {"scores": {"A": {"reason": "x", "score": 3}}}
    with pytest.raises(BadReply, match="not valid JSON"):
        parse_json(text)
    assert largest_object("no object at all") is None


@pytest.mark.parametrize(("lenient", "judged"), [(False, False), (True, True)])
def test_a_chatty_reply_counts_only_for_a_lenient_judge(workspace, owner, fake_llm, connections, lenient, judged):
    group = judged_group(workspace, owner, count=2)
    round_ = answered_round(group, owner, ["alpha on tea", "beta on tea"])
    judge, scenario = make_judge(
        workspace, owner, fake_llm, scale="1-5", metrics=[QUALITY.as_dict()], lenient_replies=lenient
    )
    fake_llm.script(scenario, {"text": CHATTY}, {"text": CHATTY})

    verdict = verdict_execute(verdict_id=verdict_request(round=round_, user=owner, judge=judge).pk)

    sent = fake_llm.requests(scenario)
    assert "alpha on tea" in sent[0]["messages"][1]["content"]  # what the judge was asked
    if judged:
        assert verdict.status == VerdictStatus.DONE and verdict.winner.text == "alpha on tea"
        assert len(sent) == 1  # read at the first try
    else:
        assert len(sent) == 2  # strict: unreadable, asked once more, then the metric is dropped
        assert verdict.winner is None
