"""Votes: one per person per round, changeable, safe under concurrency, tallied live, blind until voted."""

import asyncio

import httpx
import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer

from compare.models import OutputStatus
from lab.models import Role
from lab.realtime import group_channel
from lab.tokens.services import api_token_create
from tests.fixtures.factories import add_member
from tests.fixtures.voting_factories import finished_round, voting_group
from voting.models import Vote
from voting.services import vote_cast


@pytest.fixture
def round_(workspace, owner):
    return finished_round(voting_group(workspace, owner), owner)


def outputs_of(round_):
    return list(round_.outputs.order_by("variant__position"))


@pytest.mark.django_db
def test_a_vote_for_an_answer_is_counted(api, round_):
    first = outputs_of(round_)[0]
    response = api.post(f"/api/v1/rounds/{round_.pk}/vote/", {"output": first.pk}, format="json")
    assert response.status_code == 200, response.content
    body = response.json()
    assert body["vote"]["output"] == first.pk
    assert body["tally"] == {"outputs": {str(first.pk): 1}, "tie": 0, "all_bad": 0, "total": 1}


@pytest.mark.django_db
def test_voting_again_replaces_the_vote(api, round_):
    first, second, _ = outputs_of(round_)
    api.post(f"/api/v1/rounds/{round_.pk}/vote/", {"output": first.pk}, format="json")
    api.post(f"/api/v1/rounds/{round_.pk}/vote/", {"verdict": "tie"}, format="json")
    response = api.post(f"/api/v1/rounds/{round_.pk}/vote/", {"output": second.pk}, format="json")
    assert response.json()["tally"] == {"outputs": {str(second.pk): 1}, "tie": 0, "all_bad": 0, "total": 1}
    assert Vote.objects.filter(round=round_).count() == 1


@pytest.mark.django_db
def test_viewers_vote_and_every_member_counts_once(api, api_for, workspace, round_):
    viewer = add_member(workspace, "vera", Role.VIEWER)
    first, second, _ = outputs_of(round_)
    api.post(f"/api/v1/rounds/{round_.pk}/vote/", {"output": first.pk}, format="json")
    response = api_for(viewer).post(f"/api/v1/rounds/{round_.pk}/vote/", {"verdict": "all_bad"}, format="json")
    assert response.status_code == 200
    assert response.json()["tally"]["total"] == 2
    assert response.json()["tally"]["all_bad"] == 1


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "non_field_errors"),
        ({"verdict": "meh"}, "verdict"),
        ({"output": "first"}, "output"),
        ({"output": 999999}, "output"),
    ],
)
@pytest.mark.django_db
def test_bad_votes_name_the_field(api, round_, body, field):
    response = api.post(f"/api/v1/rounds/{round_.pk}/vote/", body, format="json")
    assert response.status_code == 400
    assert field in response.json()
    assert not Vote.objects.exists()


@pytest.mark.django_db
def test_an_answer_of_another_round_cannot_win(api, workspace, owner, round_):
    other = finished_round(voting_group(workspace, owner), owner)
    response = api.post(f"/api/v1/rounds/{round_.pk}/vote/", {"output": outputs_of(other)[0].pk}, format="json")
    assert response.status_code == 400
    assert "output" in response.json()


@pytest.mark.django_db
def test_a_failed_answer_cannot_win_but_all_bad_is_allowed(api, workspace, owner):
    round_ = finished_round(voting_group(workspace, owner, n=2), owner, (OutputStatus.OK, OutputStatus.ERROR))
    failed = outputs_of(round_)[1]
    assert api.post(f"/api/v1/rounds/{round_.pk}/vote/", {"output": failed.pk}, format="json").status_code == 400
    assert api.post(f"/api/v1/rounds/{round_.pk}/vote/", {"verdict": "all_bad"}, format="json").status_code == 200


@pytest.mark.django_db
def test_a_running_round_cannot_be_voted_on(api, workspace, owner):
    from tests.fixtures.compare_factories import start_round

    round_ = start_round(voting_group(workspace, owner), owner)
    response = api.post(f"/api/v1/rounds/{round_.pk}/vote/", {"verdict": "tie"}, format="json")
    assert response.status_code == 400
    assert "round" in response.json()


@pytest.mark.django_db
def test_another_workspaces_round_is_404(api_for, stranger, round_):
    client = api_for(stranger)
    assert client.post(f"/api/v1/rounds/{round_.pk}/vote/", {"verdict": "tie"}, format="json").status_code == 404
    assert client.get(f"/api/v1/rounds/{round_.pk}/vote/").status_code == 404
    assert not Vote.objects.exists()


def post_votes_concurrently(base_url: str, requests: list[tuple[str, str, dict]]) -> list[int]:
    """Send every (token, url, body) at once over real HTTP to the web process; returns the status codes."""

    async def send_all():
        async with httpx.AsyncClient(base_url=base_url, timeout=60) as client:
            calls = [
                client.post(url, json=body, headers={"Authorization": f"Token {token}"})
                for token, url, body in requests
            ]
            return [r.status_code for r in await asyncio.gather(*calls)]

    return asyncio.run(send_all())


@pytest.mark.services
def test_100_concurrent_votes_of_one_person_leave_exactly_one_vote(transactional_db, workspace, owner, web_server):
    round_ = finished_round(voting_group(workspace, owner), owner)
    token = api_token_create(user=owner, name="votes")[1]
    outputs = outputs_of(round_)
    url = f"/api/v1/rounds/{round_.pk}/vote/"
    statuses = post_votes_concurrently(
        web_server.url, [(token, url, {"output": outputs[i % 3].pk}) for i in range(100)]
    )
    assert statuses == [200] * 100
    assert Vote.objects.filter(round=round_, user=owner).count() == 1


@pytest.mark.services
def test_concurrent_votes_of_50_people_are_all_counted(transactional_db, workspace, owner, web_server):
    round_ = finished_round(voting_group(workspace, owner), owner)
    voters = [add_member(workspace, f"voter{i}", Role.VIEWER) for i in range(50)]
    tokens = [api_token_create(user=v, name="votes")[1] for v in voters]
    first = outputs_of(round_)[0]
    url = f"/api/v1/rounds/{round_.pk}/vote/"
    statuses = post_votes_concurrently(web_server.url, [(t, url, {"output": first.pk}) for t in tokens])
    assert statuses == [200] * 50
    assert Vote.objects.filter(round=round_, output=first).count() == 50


def tally_event_after_vote(round_, **vote) -> dict:
    layer = get_channel_layer()
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(group_channel(round_.group_id), channel)
    vote_cast(round=round_, **vote)

    @async_to_sync
    async def receive() -> dict:
        return await asyncio.wait_for(layer.receive(channel), 10)  # fail, never hang

    # A worker may still be announcing the round itself on this channel; the tally is the event we wait for.
    message = receive()
    while message["event"]["type"] != "vote.tally":
        message = receive()
    return message["event"]


@pytest.mark.django_db(transaction=True)
def test_every_vote_pushes_the_new_tally_to_the_group_channel(workspace, owner):
    round_ = finished_round(voting_group(workspace, owner), owner)
    assert tally_event_after_vote(round_, user=owner, verdict="tie") == {
        "type": "vote.tally",
        "round": round_.pk,
        "outputs": {},
        "tie": 1,
        "all_bad": 0,
        "total": 1,
    }


@pytest.mark.django_db(transaction=True)
def test_in_blind_mode_the_channel_carries_only_the_number_of_votes(workspace, owner):
    round_ = finished_round(voting_group(workspace, owner, blind=True), owner)
    winner = outputs_of(round_)[1]
    assert tally_event_after_vote(round_, user=owner, output_id=winner.pk) == {
        "type": "vote.tally",
        "round": round_.pk,
        "total": 1,
    }
