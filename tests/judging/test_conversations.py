"""The judge of a conversation's later turn sees the conversation anonymised: each answer with its own column's
earlier answers and the user's follow-ups, under "User" and "Assistant" only, and judges the last turn or, as its
configuration says, the whole conversation. Read from the judge's requests as the fake server recorded them."""

import re

import pytest

from compare.models import Output, OutputStatus, Round, RoundStatus
from compare.rounds.continuing import round_continue
from judging.rubric import Metric
from judging.services import verdict_request
from judging.verdicts import verdict_execute
from lab.fake_llm.script import ANSWER_BLOCK
from tests.fixtures.judging_factories import CANDIDATES, answered_round, judged_group, make_judge
from tests.judging.scripts import relative

pytestmark = pytest.mark.django_db

LABELS = ["Concise-XQ7", "Verbose-ZK9", "Formal-PW3"]
WORDS = ["alpha", "beta", "gamma"]
METRIC = Metric("Helpful", 1, "Unhelpful.", "Helpful.")


def conversation(workspace, owner) -> Round:
    """Two turns: each column's first answer is "<word> on tea", its second "<word> again"."""
    group = judged_group(workspace, owner, count=3, labels=LABELS)
    first = answered_round(group, owner, [f"{word} on tea" for word in WORDS])
    Output.objects.filter(round=first).update(messages=[{"role": "user", "content": "Tell me about tea."}])
    first.refresh_from_db()
    second = round_continue(round=first, user=owner, message="Why is that?")
    for output in second.outputs.select_related("variant"):
        word = WORDS[output.variant.position - 1]
        Output.objects.filter(pk=output.pk).update(status=OutputStatus.OK, text=f"{word} again", finish_reason="stop")
    Round.objects.filter(pk=second.pk).update(status=RoundStatus.DONE)
    second.refresh_from_db()
    return second


def judged_blocks(workspace, owner, fake_llm, turn: Round, **fields) -> tuple[str, dict[str, str]]:
    """The judge's prompt, and each answer block it was shown by the word of its column."""
    judge, scenario = make_judge(workspace, owner, fake_llm, metrics=[METRIC.as_dict()], **fields)
    scores = {f"{word} again": (5 - index, "why") for index, word in enumerate(WORDS)}
    fake_llm.script(scenario, relative(scores))
    verdict = verdict_execute(verdict_id=verdict_request(round=turn, user=owner, judge=judge).pk)
    assert verdict.status == "done", verdict.error
    prompt = fake_llm.requests(scenario)[-1]["messages"][1]["content"]
    for forbidden in [*LABELS, CANDIDATES, "gpt-4.1-mini"]:
        assert forbidden not in prompt
    blocks = {}
    for _, body in ANSWER_BLOCK.findall(prompt):
        [word] = [word for word in WORDS if f"{word} again" in body]
        blocks[word] = body
    assert len(blocks) == 3
    return prompt, blocks


def test_the_judge_sees_each_columns_own_conversation_and_judges_its_last_answer(
    workspace, owner, fake_llm, connections
):
    _, blocks = judged_blocks(workspace, owner, fake_llm, conversation(workspace, owner))
    for word, block in blocks.items():
        request, response = re.fullmatch(
            r"\s*<request>\n(.*)\n</request>\n<response>\n(.*)\n</response>\s*", block, re.S
        ).groups()
        assert request.startswith(f"User:\nTell me about tea.\n\nAssistant:\n{word} on tea\n\nUser:\nWhy is that?")
        assert response == f"{word} again"
        others = [other for other in WORDS if other != word]
        assert not any(other in block for other in others)  # never another column's answers


def test_a_judge_may_judge_the_whole_conversation(workspace, owner, fake_llm, connections):
    turn = conversation(workspace, owner)
    prompt, blocks = judged_blocks(workspace, owner, fake_llm, turn, conversation="whole")
    # Every column was asked the same first turn: one request, then each column's whole conversation after it.
    assert "<request>\nUser:\nTell me about tea.\n</request>" in prompt
    for word, block in blocks.items():
        assert block.strip() == f"Assistant:\n{word} on tea\n\nUser:\nWhy is that?\n\nAssistant:\n{word} again"
