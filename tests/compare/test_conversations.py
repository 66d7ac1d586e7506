"""Conversations: a finished round continues with a follow-up, every column its own conversation, sent unchanged.

The rounds run in this process against the fake LLM server, which records each request body, so the tests read
exactly what each column's third request held. The engine writes from its own thread: `transactional_db`. A
continued round is also sent to the workers (round_continue): when another module's test worker is still running,
it may take the round first, so each test waits for a round to finish (`run`), whoever ran it.
"""

import pytest
from django.core.exceptions import ValidationError

from compare.models import OutputStatus, RoundStatus
from compare.rounds.continuing import NotContinuable, round_continue
from compare.rounds.execution import round_execute
from lab.services import connection_create
from tests.compare.queued import wait_for_round
from tests.fixtures.compare_factories import INSTANT, make_group, make_round

pytestmark = pytest.mark.django_db(transaction=True)


def three_columns(workspace, owner, fake_llm, **fields):
    connection_create(workspace=workspace, name="fake", kind="openai_compatible", base_url=fake_llm.openai_url)
    scenarios = [fake_llm.model(tokens=5) for _ in range(3)]
    group = make_group(
        workspace,
        owner,
        models=[f"fake::{scenario}" for scenario in scenarios],
        prompts=["Name a {{topic}}."] * 3,
        system_prompt="Be brief.",
        **fields,
    )
    return group, scenarios


def run(round_) -> None:
    round_execute(round_id=round_.pk)
    wait_for_round(round_)


def by_position(round_) -> list:
    return list(round_.outputs.select_related("variant").order_by("variant__position"))


def test_each_columns_third_request_holds_exactly_its_own_two_earlier_answers(workspace, owner, fake_llm):
    group, scenarios = three_columns(workspace, owner, fake_llm)
    for column, scenario in enumerate(scenarios, start=1):
        fake_llm.script(scenario, *({"text": f"column {column} answer {turn}"} for turn in (1, 2, 3)))
    first = make_round(group)
    run(first)
    second = round_continue(round=first, user=owner, message="And why?")
    run(second)
    third = round_continue(round=second, user=owner, message="Say it in {{topic}} words.")
    run(third)

    third.refresh_from_db()
    assert (third.status, third.turn, third.parent_id, third.root_id) == (RoundStatus.DONE, 3, second.pk, first.pk)
    for column, (scenario, output) in enumerate(zip(scenarios, by_position(third), strict=True), start=1):
        expected = [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Name a tea."},
            {"role": "assistant", "content": f"column {column} answer 1"},
            {"role": "user", "content": "And why?"},
            {"role": "assistant", "content": f"column {column} answer 2"},
            # The follow-up is plain text: no variable is filled in it.
            {"role": "user", "content": "Say it in {{topic}} words."},
        ]
        sent = fake_llm.requests(scenario)
        assert len(sent) == 3
        assert sent[-1]["messages"] == expected
        assert output.messages == expected
        assert (output.status, output.text) == (OutputStatus.OK, f"column {column} answer 3")


def test_a_column_whose_answer_did_not_finish_is_not_continued_and_says_why(workspace, owner, fake_llm):
    group, scenarios = three_columns(workspace, owner, fake_llm)
    fake_llm.script(scenarios[1], {"status": 400, "message": "no such thing"})
    first = make_round(group)
    run(first)
    assert [o.status for o in by_position(first)] == [OutputStatus.OK, OutputStatus.ERROR, OutputStatus.OK]

    second = round_continue(round=first, user=owner, message="More, please.")
    stopped = by_position(second)[1]
    assert (stopped.status, stopped.error) == (OutputStatus.ERROR, "Not continued: its answer in turn 1 failed.")
    run(second)
    outputs = by_position(second)
    assert [o.status for o in outputs] == [OutputStatus.OK, OutputStatus.ERROR, OutputStatus.OK]
    assert outputs[1].error == "Not continued: its answer in turn 1 failed." and outputs[1].messages == []
    assert len(fake_llm.requests(scenarios[1])) == 1  # asked in turn 1 only


def test_continuing_the_same_turn_twice_makes_two_branches(workspace, owner, fake_llm):
    group, scenarios = three_columns(workspace, owner, fake_llm)
    first = make_round(group)
    run(first)
    left = round_continue(round=first, user=owner, message="Left?")
    right = round_continue(round=first, user=owner, message="Right?")
    assert (left.parent_id, right.parent_id, left.turn, right.turn) == (first.pk, first.pk, 2, 2)
    assert right.number == left.number + 1
    assert [o.messages[-1]["content"] for o in by_position(right)] == ["Right?"] * 3
    assert [o.messages[:-1] for o in by_position(right)] == [o.messages[:-1] for o in by_position(left)]
    assert set(first.children.values_list("pk", flat=True)) == {left.pk, right.pk}


def test_only_a_finished_round_goes_on(workspace, owner, fake_llm):
    group, _ = three_columns(workspace, owner, fake_llm)
    queued = make_round(group)
    with pytest.raises(NotContinuable) as excinfo:
        round_continue(round=queued, user=owner, message="Next?")
    assert excinfo.value.message_dict == {"round": ["Round 1 is queued: only a finished round goes on."]}
    with pytest.raises(ValidationError) as excinfo:
        round_continue(round=queued, user=owner, message="  ")
    assert list(excinfo.value.message_dict) == ["message"]
    assert group.rounds.count() == 1


def test_a_conversation_grown_past_the_models_context_is_refused_before_the_request(workspace, owner, fake_llm):
    connection_create(workspace=workspace, name="or", kind="openrouter", base_url=fake_llm.openai_url, api_key="sk-t")
    scenario = fake_llm.model(name="fake-free")  # a context of 8,192 tokens
    group = make_group(workspace, owner, models=[f"or::{scenario}", INSTANT], prompts=["Name a {{topic}}."] * 2)
    first = make_round(group)
    run(first)
    second = round_continue(round=first, user=owner, message="word " * 8000)
    run(second)

    long, short = by_position(second)
    assert long.status == OutputStatus.ERROR
    assert long.error.startswith("Variant 1 (A): The conversation is about 10,0")
    assert f"more than the context of or::{scenario} (8,192 tokens)" in long.error
    assert fake_llm.scenario(scenario)["requests"] == 1  # turn 1 only
    assert short.status == OutputStatus.OK  # a model without a known context goes on
