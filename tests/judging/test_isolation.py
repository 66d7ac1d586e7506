"""Another workspace's judges, rounds and verdicts are indistinguishable from missing ones: 404 everywhere, and a
judge named in a body is a 400 on that field."""

import pytest

from tests.fixtures.judging_factories import answered_round, judged_group, make_judge


@pytest.fixture
def theirs(owner, workspace, fake_llm, connections):
    judge, _ = make_judge(workspace, owner, fake_llm)
    group = judged_group(workspace, owner, count=2)
    return judge, group, answered_round(group, owner, ["a", "b"])


def test_a_stranger_gets_404_from_every_judging_api(api_for, stranger, workspace, theirs):
    judge, group, round_ = theirs
    client = api_for(stranger)
    base = f"/api/v1/workspaces/{workspace.pk}/judges/"

    assert client.get(base).status_code == 404
    assert client.get(f"{base}{judge.pk}/").status_code == 404
    assert client.get(f"{base}{judge.pk}/diagnostics/").status_code == 404
    assert client.patch(f"{base}{judge.pk}/", {"name": "mine"}, format="json").status_code == 404
    assert client.delete(f"{base}{judge.pk}/").status_code == 404
    assert client.post(f"/api/v1/rounds/{round_.pk}/judge/", {"judge": judge.pk}, format="json").status_code == 404
    assert client.get(f"/api/v1/rounds/{round_.pk}/verdicts/").status_code == 404
    assert client.put(f"/api/v1/groups/{group.pk}/judge/", {"judge": judge.pk}, format="json").status_code == 404


def test_a_judge_of_another_workspace_cannot_be_reached_through_mine(api_for, stranger, theirs):
    judge, _, _ = theirs
    mine = stranger.memberships.get().workspace

    assert api_for(stranger).get(f"/api/v1/workspaces/{mine.pk}/judges/{judge.pk}/").status_code == 404


def test_naming_another_workspaces_judge_for_my_round_is_a_400_on_the_field(api_for, stranger, theirs, fake_llm):
    from tests.fixtures.judging_factories import fake_connections

    judge, _, _ = theirs
    mine = stranger.memberships.get().workspace
    fake_connections(mine, fake_llm)
    my_round = answered_round(judged_group(mine, stranger, count=2), stranger, ["x", "y"])

    response = api_for(stranger).post(f"/api/v1/rounds/{my_round.pk}/judge/", {"judge": judge.pk}, format="json")

    assert response.status_code == 400 and response.json() == {"judge": ["No such judge in this workspace."]}


def test_a_stranger_gets_404_from_every_judging_page(client, stranger, workspace, theirs):
    judge, _, round_ = theirs
    client.force_login(stranger)

    for url in (
        f"/w/{workspace.pk}/judges/",
        f"/w/{workspace.pk}/judges/new/",
        f"/judges/{judge.pk}/",
        f"/judges/{judge.pk}/edit/",
        f"/judging/rounds/{round_.pk}/verdict/",
        f"/votes/judges/{judge.pk}/agreement/",
    ):
        assert client.get(url).status_code == 404, url
    assert client.post(f"/judges/{judge.pk}/delete/").status_code == 404
    assert client.post(f"/judging/rounds/{round_.pk}/judge/", {"judge": judge.pk}).status_code == 404
