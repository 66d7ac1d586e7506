"""The "To vote" inbox: never a round I voted on or skipped, the rule's order, filters, undo, isolation."""

import pytest

from lab.models import Role
from tests.fixtures.factories import add_member
from tests.fixtures.voting_factories import finished_round, voting_group
from voting.inbox.rule import RULE_SENTENCE
from voting.models import InboxServe, Vote
from voting.services import vote_cast

pytestmark = pytest.mark.django_db


def inbox_url(workspace, **query):
    params = "&".join(f"{key}={value}" for key, value in query.items())
    return f"/api/v1/workspaces/{workspace.pk}/inbox/next/" + (f"?{params}" if params else "")


def next_round(client, workspace, **query) -> dict:
    response = client.get(inbox_url(workspace, **query))
    assert response.status_code == 200, response.content
    return response.json()


def vote_first(client, body) -> None:
    response = client.post(f"/api/v1/rounds/{body['round']['id']}/vote/", {"output": body["outputs"][0]["id"]})
    assert response.status_code == 200, response.content


def test_it_serves_every_open_round_once_and_never_one_i_voted_on(api, workspace, owner):
    group = voting_group(workspace, owner)
    rounds = [finished_round(group, owner) for _ in range(4)]
    vote_cast(round=rounds[2], user=owner, verdict="tie")  # voted on the comparison page
    served = []
    while (body := next_round(api, workspace))["round"] is not None:
        served.append(body["round"]["id"])
        vote_first(api, body)
    assert sorted(served) == sorted(r.pk for r in rounds if r.pk != rounds[2].pk)
    assert body["remaining"] == 0 and body["rule"] == RULE_SENTENCE


def test_a_skipped_round_is_remembered_until_undone(api, workspace, owner):
    group = voting_group(workspace, owner)
    first, second = finished_round(group, owner), finished_round(group, owner)
    body = next_round(api, workspace)
    skipped = body["round"]["id"]
    response = api.post(f"/api/v1/workspaces/{workspace.pk}/inbox/skip/", {"round": skipped}, format="json")
    assert response.json() == {"round": skipped, "skipped": True}
    for _ in range(3):
        assert next_round(api, workspace)["round"]["id"] != skipped
    undo = api.post(f"/api/v1/workspaces/{workspace.pk}/inbox/undo/", {"round": skipped}, format="json").json()
    assert undo["undone"] == "skip" and undo["round"]["id"] == skipped
    vote_first(api, next_round(api, workspace))
    vote_first(api, next_round(api, workspace))
    assert set(Vote.objects.filter(user=owner).values_list("round_id", flat=True)) == {first.pk, second.pk}


def test_undo_takes_back_my_last_vote_and_shows_the_round_again(api, workspace, owner):
    round_ = finished_round(voting_group(workspace, owner), owner)
    body = next_round(api, workspace)
    vote_first(api, body)
    assert next_round(api, workspace)["round"] is None
    undo = api.post(f"/api/v1/workspaces/{workspace.pk}/inbox/undo/", {"round": round_.pk}, format="json").json()
    assert undo["undone"] == "vote" and undo["round"]["id"] == round_.pk
    assert not Vote.objects.filter(round=round_, user=owner).exists()
    assert next_round(api, workspace)["round"]["id"] == round_.pk


def test_it_serves_the_comparison_nearest_to_a_verdict_first(api, api_for, workspace, owner):
    """One comparison has 9 decisive votes one way (1 short of the minimum), the other none: the first is nearer."""
    near, fresh = voting_group(workspace, owner, n=2), voting_group(workspace, owner, n=2)
    for index in range(9):
        round_ = finished_round(near, owner)
        voter = add_member(workspace, f"voter{index}", Role.VIEWER)
        vote_cast(round=round_, user=voter, output_id=round_.outputs.order_by("variant__position")[0].pk)
    finished_round(fresh, owner)
    assert next_round(api, workspace)["group"]["id"] == near.pk


def test_within_a_comparison_the_round_with_fewest_votes_comes_first(api, workspace, owner):
    group = voting_group(workspace, owner)
    voted, untouched = finished_round(group, owner), finished_round(group, owner)
    vote_cast(round=voted, user=add_member(workspace, "ann", Role.VIEWER), verdict="tie")
    assert next_round(api, workspace)["round"]["id"] == untouched.pk


def test_filters_by_comparison_author_and_model(api, workspace, owner, editor):
    mine = voting_group(workspace, owner)
    theirs = voting_group(workspace, editor, title="Editor's")
    finished_round(mine, owner), finished_round(theirs, editor)
    assert next_round(api, workspace, group=theirs.pk)["group"]["id"] == theirs.pk
    assert next_round(api, workspace, author="editor")["group"]["id"] == theirs.pk
    assert next_round(api, workspace, model="nobody::none")["round"] is None


def test_bad_filters_are_a_400_naming_the_field(api, api_for, workspace, owner, stranger):
    other = voting_group(stranger.memberships.get().workspace, stranger)
    response = api.get(inbox_url(workspace, group=other.pk))
    assert response.status_code == 400 and "group" in response.json()
    assert api.get(inbox_url(workspace, blind="maybe")).status_code == 400
    skip = api.post(f"/api/v1/workspaces/{workspace.pk}/inbox/skip/", {"round": "x"}, format="json")
    assert skip.status_code == 400 and "round" in skip.json()


def test_another_workspace_answers_404(api_for, workspace, owner, stranger):
    round_ = finished_round(voting_group(workspace, owner), owner)
    outsider = api_for(stranger)
    assert outsider.get(inbox_url(workspace)).status_code == 404
    own = stranger.memberships.get().workspace
    skip = outsider.post(f"/api/v1/workspaces/{own.pk}/inbox/skip/", {"round": round_.pk}, format="json")
    assert skip.status_code == 404
    undo = outsider.post(f"/api/v1/workspaces/{own.pk}/inbox/undo/", {"round": round_.pk}, format="json")
    assert undo.status_code == 404


def test_a_round_someone_else_has_open_goes_to_others_last(api, api_for, workspace, owner):
    group = voting_group(workspace, owner)
    first, second = finished_round(group, owner), finished_round(group, owner)
    teammate = api_for(add_member(workspace, "tess", Role.VIEWER))
    held = next_round(teammate, workspace)["round"]["id"]
    assert next_round(api, workspace)["round"]["id"] == ({first.pk, second.pk} - {held}).pop()
    # With nothing else left, the open round is served after all.
    vote_cast(round=first if held == second.pk else second, user=owner, verdict="tie")
    assert next_round(api, workspace)["round"]["id"] == held


def test_serving_records_when_the_round_was_shown(api, workspace, owner):
    round_ = finished_round(voting_group(workspace, owner), owner)
    next_round(api, workspace, blind="false")
    serve = InboxServe.objects.get(round=round_, user=owner)
    assert serve.blind is False and serve.served_at is not None


def test_the_inbox_and_voter_quality_endpoints_are_in_the_openapi_schema(api):
    schema = api.get("/api/schema/?format=json").json()
    for path in (
        "/api/v1/workspaces/{id}/inbox/next/",
        "/api/v1/workspaces/{id}/inbox/skip/",
        "/api/v1/workspaces/{id}/inbox/undo/",
        "/api/v1/workspaces/{id}/voters/",
        "/api/v1/workspaces/{id}/voters/{user_id}/exclusion/",
    ):
        assert path in schema["paths"], path
    parameters = {p["name"] for p in schema["paths"]["/api/v1/workspaces/{id}/inbox/next/"]["get"]["parameters"]}
    assert {"group", "author", "model", "blind"} <= parameters
    report = schema["components"]["schemas"]["GroupReportOut"]["properties"]
    assert "left_out" in report


def test_a_committed_vote_refreshes_the_cached_need(api, workspace, owner, django_capture_on_commit_callbacks):
    fresh, filling = voting_group(workspace, owner, n=2), voting_group(workspace, owner, n=2)
    finished_round(fresh, owner)
    rounds = [finished_round(filling, owner) for _ in range(10)]
    assert next_round(api, workspace)["group"]["id"] == fresh.pk  # level needs: the older round first
    with django_capture_on_commit_callbacks(execute=True):  # the votes' commit hooks, as after a real commit
        for index, round_ in enumerate(rounds[:9]):
            voter = add_member(workspace, f"voter{index}", Role.VIEWER)
            vote_cast(round=round_, user=voter, output_id=round_.outputs.order_by("variant__position")[0].pk)
    assert next_round(api, workspace)["round"]["id"] == rounds[9].pk  # one decisive vote short of a verdict
