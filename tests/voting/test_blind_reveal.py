"""Blind mode: names and order stay hidden from each person until they have voted on that round."""

import pytest

from lab.models import Role
from tests.fixtures.factories import add_member
from tests.fixtures.voting_factories import finished_round, voting_group

pytestmark = pytest.mark.django_db


def seen(client, round_):
    body = client.get(f"/api/v1/rounds/{round_.pk}/").json()
    assert all((o["label"] is None) != body["labels_visible"] for o in body["outputs"])  # null while hidden
    return body["labels_visible"], [(o["id"], o["shown_as"], o["model"]) for o in body["outputs"]]


def test_labels_are_hidden_until_i_vote_and_then_revealed(api, workspace, owner):
    round_ = finished_round(voting_group(workspace, owner, blind=True), owner)
    visible, outputs = seen(api, round_)
    assert visible is False
    assert {label for _, label, _ in outputs} == {"Answer A", "Answer B", "Answer C"}
    assert all(model is None for _, _, model in outputs)

    api.post(f"/api/v1/rounds/{round_.pk}/vote/", {"output": outputs[0][0]}, format="json")
    visible, outputs = seen(api, round_)
    assert visible is True
    assert sorted(label for _, label, _ in outputs) == ["A", "B", "C"]
    assert all(model == "simulated::instant" for _, _, model in outputs)


def test_my_vote_reveals_nothing_to_a_teammate(api, api_for, workspace, owner):
    round_ = finished_round(voting_group(workspace, owner, blind=True), owner)
    teammate = api_for(add_member(workspace, "tess", Role.VIEWER))
    api.post(f"/api/v1/rounds/{round_.pk}/vote/", {"verdict": "tie"}, format="json")
    visible, outputs = seen(teammate, round_)
    assert visible is False
    assert all(label.startswith("Answer ") for _, label, _ in outputs)


def test_the_hidden_order_is_shuffled_per_voter(api_for, workspace, owner):
    """Across several voters at least one sees a different column order; each sees a stable one."""
    round_ = finished_round(voting_group(workspace, owner, n=5, blind=True), owner)
    orders = set()
    for i in range(6):
        client = api_for(add_member(workspace, f"voter{i}", Role.VIEWER))
        first = [oid for oid, _, _ in seen(client, round_)[1]]
        assert first == [oid for oid, _, _ in seen(client, round_)[1]]
        orders.add(tuple(first))
    assert len(orders) > 1


def test_a_round_that_is_not_blind_shows_labels_to_everyone(api, workspace, owner):
    round_ = finished_round(voting_group(workspace, owner), owner)
    visible, outputs = seen(api, round_)
    assert visible is True
    assert [label for _, label, _ in outputs] == ["A", "B", "C"]


def test_the_vote_endpoint_gives_a_blind_round_s_total_only_until_i_vote(api, api_for, workspace, owner):
    round_ = finished_round(voting_group(workspace, owner, blind=True), owner)
    teammate = api_for(add_member(workspace, "tess", Role.VIEWER))
    teammate.post(f"/api/v1/rounds/{round_.pk}/vote/", {"verdict": "tie"}, format="json")

    before = api.get(f"/api/v1/rounds/{round_.pk}/vote/").json()
    assert before == {"vote": None, "tally": {"total": 1}}  # where the teammate's vote went stays unsaid

    after = api.post(f"/api/v1/rounds/{round_.pk}/vote/", {"verdict": "tie"}, format="json").json()
    assert after["tally"] == {"outputs": {}, "tie": 2, "all_bad": 0, "total": 2}
    assert api.get(f"/api/v1/rounds/{round_.pk}/vote/").json()["tally"] == after["tally"]
