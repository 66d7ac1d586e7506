"""Votes on whole conversations: one per person per conversation, replaced by voting again, counted apart from the
per-turn votes (never twice), and the report and leaderboard pages say how they count turns."""

import pytest
from django.core.exceptions import ValidationError
from django.urls import reverse
from rest_framework.test import APIClient

from compare.blind import labels_visible
from compare.models import Output, OutputStatus, Round, RoundStatus
from compare.rounds.continuing import round_continue
from tests.fixtures.voting_factories import finished_round, voting_group
from voting.conversation_counts import TURN_COUNTING, group_conversation_votes
from voting.conversation_votes import conversation_vote_cast
from voting.models import ConversationVote, Vote, VoteCount
from voting.reports.cache import cached_group_report
from voting.reports.comparison import DEFAULT_PASS_THRESHOLD
from voting.services import vote_cast

pytestmark = pytest.mark.django_db


def finish(round_: Round) -> Round:
    Output.objects.filter(round=round_).update(status=OutputStatus.OK, text="more")
    Round.objects.filter(pk=round_.pk).update(status=RoundStatus.DONE)
    round_.refresh_from_db()
    return round_


def conversation(workspace, owner):
    group = voting_group(workspace, owner, n=3)
    first = finished_round(group, owner)
    second = finish(round_continue(round=first, user=owner, message="And?"))
    third = finish(round_continue(round=second, user=owner, message="Then?"))
    return group, first, second, third


def answers(round_: Round) -> list[Output]:
    return list(round_.outputs.order_by("variant__position"))


def test_one_conversation_vote_per_person_replaced_by_voting_again(workspace, owner):
    group, first, second, third = conversation(workspace, owner)
    conversation_vote_cast(round=second, user=owner, output_id=answers(second)[0].pk)
    vote = conversation_vote_cast(round=third, user=owner, output_id=answers(third)[2].pk)
    assert ConversationVote.objects.count() == 1
    assert (vote.root_id, vote.turn_id, vote.variant_id) == (first.pk, third.pk, answers(third)[2].variant_id)
    conversation_vote_cast(round=third, user=owner, verdict="tie")
    assert list(ConversationVote.objects.values_list("choice", "variant")) == [("tie", None)]


def test_conversation_votes_are_counted_apart_from_the_turn_votes(workspace, owner):
    group, first, second, third = conversation(workspace, owner)
    for turn in (first, second, third):
        vote_cast(round=turn, user=owner, output_id=answers(turn)[1].pk)
    conversation_vote_cast(round=third, user=owner, output_id=answers(third)[1].pk)
    # Each turn's vote is one comparison; the conversation vote is in neither the votes nor their counts.
    assert Vote.objects.filter(group=group).count() == 3
    assert sum(VoteCount.objects.filter(group=group).values_list("votes", flat=True)) == 3
    assert cached_group_report(group, pass_threshold=DEFAULT_PASS_THRESHOLD)["report"]["votes"] == 3
    variant = answers(third)[1].variant_id
    assert group_conversation_votes(group) == {"variants": {variant: 1}, "tie": 0, "all_bad": 0, "total": 1}


def test_a_first_turn_alone_or_a_column_that_stopped_cannot_win_a_conversation_vote(workspace, owner):
    group = voting_group(workspace, owner, n=2)
    first = finished_round(group, owner, statuses=(OutputStatus.OK, OutputStatus.TIMEOUT))
    with pytest.raises(ValidationError) as excinfo:
        conversation_vote_cast(round=first, user=owner, verdict="tie")
    assert list(excinfo.value.message_dict) == ["round"]
    second = round_continue(round=first, user=owner, message="And?")
    Output.objects.filter(round=second, status=OutputStatus.QUEUED).update(status=OutputStatus.OK, text="x")
    Round.objects.filter(pk=second.pk).update(status=RoundStatus.DONE)
    second.refresh_from_db()
    stopped = answers(second)[1]
    assert stopped.error == "Not continued: its answer in turn 1 timed out."
    with pytest.raises(ValidationError) as excinfo:
        conversation_vote_cast(round=second, user=owner, output_id=stopped.pk)
    assert list(excinfo.value.message_dict) == ["output"]


def test_the_api_casts_and_reads_my_conversation_vote(workspace, owner, viewer, stranger):
    group, first, second, third = conversation(workspace, owner)
    api = APIClient()
    api.force_authenticate(viewer)  # viewers vote too
    url = f"/api/v1/rounds/{third.pk}/conversation-vote/"
    response = api.post(url, {"output": answers(third)[0].pk}, format="json")
    assert response.status_code == 200, response.content
    assert response.json()["vote"]["root"] == first.pk and response.json()["counting"] == TURN_COUNTING
    assert api.get(f"/api/v1/rounds/{second.pk}/conversation-vote/").json()["vote"]["turn"] == third.pk
    assert api.post(url, {}, format="json").status_code == 400
    api.force_authenticate(stranger)
    assert api.post(url, {"verdict": "tie"}, format="json").status_code == 404


def test_the_report_and_leaderboard_pages_say_how_they_count_turns(client, workspace, owner):
    group, first, second, third = conversation(workspace, owner)
    conversation_vote_cast(round=third, user=owner, output_id=answers(third)[0].pk)
    client.force_login(owner)
    report = client.get(reverse("voting:report_page", args=[group.pk])).content.decode()
    assert TURN_COUNTING in report
    assert "Votes on whole conversations: 1" in report
    board = client.get(reverse("voting:leaderboard", args=[workspace.pk])).content.decode()
    assert TURN_COUNTING in board


def test_in_a_blind_conversation_names_show_once_the_person_votes_on_the_whole(workspace, owner):
    group = voting_group(workspace, owner, n=3, blind=True)
    first = finished_round(group, owner)
    second = finish(round_continue(round=first, user=owner, message="And?"))
    # A turn's own vote does not show its names: they would name every turn of the conversation.
    vote_cast(round=second, user=owner, output_id=answers(second)[0].pk)
    vote_cast(round=first, user=owner, output_id=answers(first)[0].pk)
    assert not labels_visible(first, owner) and not labels_visible(second, owner)
    conversation_vote_cast(round=second, user=owner, verdict="tie")
    assert labels_visible(first, owner) and labels_visible(second, owner)


def test_a_later_turns_vote_panel_offers_the_conversation_vote(client, workspace, owner):
    group, first, second, third = conversation(workspace, owner)
    client.force_login(owner)
    panel = client.get(reverse("voting:panel", args=[third.pk])).content.decode()
    assert reverse("api-round-conversation-vote", args=[third.pk]) in panel
    assert "conversation-vote" not in client.get(reverse("voting:panel", args=[first.pk])).content.decode()


def test_the_report_and_leaderboard_apis_say_how_they_count_turns(workspace, owner):
    group, first, second, third = conversation(workspace, owner)
    vote_cast(round=third, user=owner, output_id=answers(third)[0].pk)
    conversation_vote_cast(round=third, user=owner, output_id=answers(third)[1].pk)
    api = APIClient()
    api.force_authenticate(owner)
    report = api.get(f"/api/v1/groups/{group.pk}/report/").json()
    assert report["report"]["votes"] == 1
    assert report["turns"] == {
        "counting": TURN_COUNTING,
        "conversation_votes": {
            "total": 1,
            "tie": 0,
            "all_bad": 0,
            "winners": [{"variant": answers(third)[1].variant_id, "votes": 1}],
        },
    }
    board = api.get(f"/api/v1/workspaces/{workspace.pk}/leaderboard/").json()
    assert board["turn_counting"] == TURN_COUNTING
