"""`POST /api/v1/rounds/{id}/continue/`: 202 with the next turn, 409 while the round is unfinished, 400 naming
`message`, 404 for another workspace, 403 for a viewer; `GET /api/v1/rounds/{id}/` shows `parent` and `turn`; in
blind mode a column keeps its letter and place in every turn, for each voter."""

import pytest
from rest_framework.test import APIClient

from compare import selectors
from compare.blind import outputs_as_seen_by
from compare.models import Output, OutputStatus, Round, RoundStatus
from compare.rounds.continuing import round_continue
from lab.models import Role
from tests.fixtures.compare_factories import make_group, make_round
from tests.fixtures.factories import add_member

pytestmark = pytest.mark.django_db


def client_for(user) -> APIClient:
    client = APIClient()
    client.force_authenticate(user)
    return client


def finished(round_: Round) -> Round:
    """The round as if its answers had come back (the worker's part is tested in test_conversations)."""
    Round.objects.filter(pk=round_.pk).update(status=RoundStatus.DONE)
    for output in round_.outputs.all():
        output.status, output.text = OutputStatus.OK, f"answer of {output.variant.label}"
        output.messages = [{"role": "user", "content": "Say something about tea."}]
        output.save()
    round_.refresh_from_db()
    return round_


def url(round_: Round) -> str:
    return f"/api/v1/rounds/{round_.pk}/continue/"


def test_it_answers_202_with_the_next_turn_as_the_round_endpoint_shows_it(workspace, owner):
    first = finished(make_round(make_group(workspace, owner)))
    response = client_for(owner).post(url(first), {"message": "Why?"}, format="json")
    assert response.status_code == 202, response.content
    body = response.json()
    assert (body["parent"], body["turn"], body["message"], body["status"]) == (first.pk, 2, "Why?", "queued")
    assert body == client_for(owner).get(f"/api/v1/rounds/{body['id']}/").json()
    assert [o["status"] for o in body["outputs"]] == ["queued", "queued"]
    again = client_for(owner).get(f"/api/v1/rounds/{first.pk}/").json()
    assert (again["parent"], again["turn"]) == (None, 1)


def test_an_unfinished_round_is_a_409_with_a_json_message(workspace, owner):
    queued = make_round(make_group(workspace, owner))
    response = client_for(owner).post(url(queued), {"message": "Why?"}, format="json")
    assert response.status_code == 409
    assert response.json() == {"round": ["Round 1 is queued: only a finished round goes on."]}


@pytest.mark.parametrize("body", [{}, {"message": ""}, {"message": "   "}, {"message": None}, {"message": []}])
def test_a_missing_or_empty_message_is_a_400_naming_message(workspace, owner, body):
    first = finished(make_round(make_group(workspace, owner)))
    response = client_for(owner).post(url(first), body, format="json")
    assert response.status_code == 400
    assert list(response.json()) == ["message"]
    assert Round.objects.filter(parent=first).count() == 0


def test_another_workspaces_round_is_a_404(workspace, owner, stranger):
    first = finished(make_round(make_group(workspace, owner)))
    assert client_for(stranger).post(url(first), {"message": "Why?"}, format="json").status_code == 404


def test_a_viewer_may_not_continue_a_conversation(workspace, owner, viewer):
    first = finished(make_round(make_group(workspace, owner)))
    assert client_for(viewer).post(url(first), {"message": "Why?"}, format="json").status_code == 403
    assert client_for(viewer).get(f"/api/v1/rounds/{first.pk}/").status_code == 200


def test_a_round_with_no_finished_answer_has_nothing_to_continue(workspace, owner):
    first = finished(make_round(make_group(workspace, owner)))
    Output.objects.filter(round=first).update(status=OutputStatus.TIMEOUT)
    response = client_for(owner).post(url(first), {"message": "Why?"}, format="json")
    assert response.status_code == 409
    assert response.json() == {"round": ["No answer of round 1 finished: there is nothing to continue."]}


def test_the_schema_describes_continue_parent_and_turn(client):
    schema = client.get("/api/schema/?format=json").json()
    operation = schema["paths"]["/api/v1/rounds/{id}/continue/"]["post"]
    assert set(operation["responses"]) >= {"202", "400", "403", "404", "409"}
    schemas = schema["components"]["schemas"]

    def named(reference: dict) -> dict:
        return schemas[reference["$ref"].rsplit("/", 1)[1]]

    body = named(operation["requestBody"]["content"]["application/json"]["schema"])
    # `message` may be left out when tool results are given (docs/tools.md).
    assert {"message", "tool_results"} <= set(body["properties"])
    returned = named(operation["responses"]["202"]["content"]["application/json"]["schema"])
    assert {"parent", "turn", "outputs"} <= set(returned["properties"])
    assert operation["responses"]["409"]["content"]["application/json"]["schema"] == {
        "$ref": "#/components/schemas/Error"
    }


def test_blind_columns_keep_their_letter_and_place_in_every_turn_for_each_voter(workspace, owner):
    group = make_group(workspace, owner, models=["simulated::instant"] * 4, prompts=["a", "b", "c", "d"], blind=True)
    voters = [owner, *(add_member(workspace, f"voter{i}", Role.EDITOR) for i in range(5))]
    turns = [finished(make_round(group))]
    for message in ("Second?", "Third?"):
        turns.append(finished(round_continue(round=turns[-1], user=owner, message=message)))
    # A fresh creation order per turn, so ids say nothing across turns either.
    assert len({tuple(t.outputs.order_by("id").values_list("variant__position", flat=True)) for t in turns}) > 1

    orders = []
    for voter in voters:
        seen = []
        for turn in turns:
            outputs, visible = outputs_as_seen_by(selectors.round_with_outputs(turn), voter)
            assert not visible
            seen.append([(output.seen.label, output.variant_id) for output in outputs])
        assert seen[0] == seen[1] == seen[2], voter
        orders.append(tuple(variant for _, variant in seen[0]))
    assert len(set(orders)) > 1  # each voter still has a shuffle of their own
