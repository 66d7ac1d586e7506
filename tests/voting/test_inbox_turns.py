"""A later turn of a conversation in the inbox: the conversation so far, blind-safe, each column's own earlier
answers in its column (never another's), the same columns and names in every turn, and the optional vote on the
whole conversation, kept once per person."""

import json

import pytest

from compare.blind import blind_order
from compare.models import Output, OutputStatus, Round, RoundStatus
from compare.rounds.continuing import round_continue
from tests.fixtures.compare_factories import INSTANT, make_group
from tests.fixtures.voting_factories import finished_round
from voting.models import ConversationVote, Vote

pytestmark = pytest.mark.django_db

MODELS = [INSTANT, "simulated::coder", "simulated::writer"]
PROMPT = "Name a good tea for the evening."
FOLLOW_UPS = ["Why that one?", "And in summer?"]


def answer(turn: int, output: Output) -> str:
    return f"turn {turn} answer of variant {output.variant_id}"


def give_answers(round_: Round, turn: int) -> None:
    for output in round_.outputs.all():
        Output.objects.filter(pk=output.pk).update(status=OutputStatus.OK, text=answer(turn, output))
    Round.objects.filter(pk=round_.pk).update(status=RoundStatus.DONE)
    round_.refresh_from_db()


def three_turns(workspace, owner) -> list[Round]:
    group = make_group(workspace, owner, models=MODELS, prompts=[PROMPT] * 3, blind=True, title="Tea talk")
    first = finished_round(group, owner)
    for output in first.outputs.all():
        Output.objects.filter(pk=output.pk).update(
            rendered_prompt=PROMPT, messages=[{"role": "user", "content": PROMPT}], text=answer(1, output)
        )
    turns = [first]
    for message in FOLLOW_UPS:
        turn = round_continue(round=turns[-1], user=owner, message=message)
        give_answers(turn, turn.turn)
        turns.append(turn)
    return turns


def inbox_next(api, workspace) -> dict:
    return api.get(f"/api/v1/workspaces/{workspace.pk}/inbox/next/").json()


def test_turn_three_shows_the_conversation_so_far_each_column_its_own_answers_and_no_names(api, workspace, owner):
    first, second, third = three_turns(workspace, owner)
    for earlier in (first, second):
        Vote.objects.create(round=earlier, group=earlier.group, user=owner, choice="tie")  # leave turn 3 to serve
    body = inbox_next(api, workspace)
    assert body["round"]["id"] == third.pk
    conversation = body["conversation"]
    assert conversation["turn"] == 3 and conversation["message"] == "And in summer?"
    assert conversation["asked"] == [{"turn": 1, "text": PROMPT}, {"turn": 2, "text": "Why that one?"}]
    assert conversation["voted"] is False
    variants = dict(Output.objects.filter(round=third).values_list("pk", "variant_id"))
    for output in body["outputs"]:
        own = variants[output["id"]]
        # Its own earlier answers, first turn first, and never another column's.
        assert output["earlier"] == [
            {"turn": 1, "answer": f"turn 1 answer of variant {own}"},
            {"turn": 2, "answer": f"turn 2 answer of variant {own}"},
        ]
        assert output["text"] == f"turn 3 answer of variant {own}"
    # Columns in this person's order for the conversation: the same in every turn.
    in_order = list(third.outputs.order_by("variant__position"))
    assert [o["id"] for o in body["outputs"]] == [o.pk for o in blind_order(first.pk, owner.pk, in_order)]
    assert body["labels_visible"] is False
    shown = json.dumps(body)
    assert not any(model in shown for model in MODELS)
    assert all(o["model"] is None and o["label"] is None and o["messages"] is None for o in body["outputs"])


def test_a_column_that_stopped_shows_no_earlier_answers_of_another(api, workspace, owner):
    group = make_group(workspace, owner, models=MODELS, prompts=[PROMPT] * 3, blind=True)
    first = finished_round(group, owner, statuses=(OutputStatus.OK, OutputStatus.TIMEOUT, OutputStatus.OK))
    second = round_continue(round=first, user=owner, message="Why?")
    Output.objects.filter(round=second, status=OutputStatus.QUEUED).update(status=OutputStatus.OK, text="x")
    Round.objects.filter(pk=second.pk).update(status=RoundStatus.DONE)
    Vote.objects.create(round=first, group=group, user=owner, choice="tie")
    body = inbox_next(api, workspace)
    assert body["round"]["id"] == second.pk
    by_output = {o.pk: o for o in second.outputs.all()}
    for output in body["outputs"]:
        texts = [earlier["answer"] for earlier in output["earlier"]]
        before = first.outputs.get(variant_id=by_output[output["id"]].variant_id)
        assert texts == ([] if before.status != OutputStatus.OK else [before.text])


def test_a_first_turn_has_no_conversation(api, workspace, owner):
    first, _, _ = three_turns(workspace, owner)
    body = inbox_next(api, workspace)
    assert body["round"]["id"] == first.pk  # the inbox serves rounds in its own order; turn 1 first here
    assert body["conversation"] is None and all(o["earlier"] == [] for o in body["outputs"])


def test_the_conversation_vote_from_the_inbox_is_one_per_person_and_apart_from_turn_votes(api, workspace, owner):
    first, second, third = three_turns(workspace, owner)
    for earlier in (first, second):
        Vote.objects.create(round=earlier, group=earlier.group, user=owner, choice="tie")
    body = inbox_next(api, workspace)
    picked = body["outputs"][1]["id"]
    for _ in range(2):  # voting again replaces it
        reply = api.post(f"/api/v1/rounds/{third.pk}/conversation-vote/", {"output": picked}, format="json")
        assert reply.status_code == 200
    assert ConversationVote.objects.filter(user=owner).count() == 1
    assert not Vote.objects.filter(round=third).exists()  # the turn itself is still to vote on
    body = inbox_next(api, workspace)
    assert body["round"]["id"] == third.pk
    assert body["conversation"]["voted"] is True and body["conversation"]["vote_output"] == picked
    assert body["labels_visible"] is True  # a blind conversation shows its names once voted on as a whole
