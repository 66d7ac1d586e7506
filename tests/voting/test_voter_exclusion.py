"""Owners exclude a voter from the statistics: the report and the leaderboard leave the votes out and say so."""

import pytest
from django.utils import timezone
from scipy.stats import combine_pvalues

from judging.models import JudgeConfig, Verdict, VerdictStatus
from judging.selectors import judge_round_choices
from lab.models import Role
from tests.fixtures.factories import add_member
from tests.fixtures.voting_factories import finished_round, voting_group
from voting.judge_agreement import judge_team_agreement
from voting.services import vote_cast

pytestmark = pytest.mark.django_db


def exclusion_url(workspace, user):
    return f"/api/v1/workspaces/{workspace.pk}/voters/{user.pk}/exclusion/"


@pytest.fixture
def voted(workspace, owner):
    """12 rounds: the owner and vera vote for the first answer, bob (a fast clicker) for the second."""
    group = voting_group(workspace, owner, n=2)
    vera, bob = add_member(workspace, "vera", Role.VIEWER), add_member(workspace, "bob", Role.VIEWER)
    for _ in range(12):
        round_ = finished_round(group, owner)
        first, second = round_.outputs.order_by("variant__position")
        vote_cast(round=round_, user=owner, output_id=first.pk)
        vote_cast(round=round_, user=vera, output_id=first.pk)
        vote_cast(round=round_, user=bob, output_id=second.pk)
    return group, bob


def test_excluding_a_voter_changes_the_report_and_the_report_says_so(
    api, client, owner, workspace, voted, django_capture_on_commit_callbacks
):
    group, bob = voted
    before = api.get(f"/api/v1/groups/{group.pk}/report/").json()
    assert before["report"]["votes"] == 36
    assert before["left_out"] == {"votes": 0, "voters": [], "sentence": "No votes were left out: every vote counts."}

    with django_capture_on_commit_callbacks(execute=True):  # the exclusion's commit hook, as after a real commit
        response = api.put(exclusion_url(workspace, bob), {"reason": "votes faster than reading"}, format="json")
    assert response.status_code == 200, response.content
    after = api.get(f"/api/v1/groups/{group.pk}/report/").json()
    assert after["report"]["votes"] == 24
    first, second = after["report"]["variants"]
    assert (first["wins"], second["wins"]) == (24, 0)
    assert after["left_out"]["votes"] == 12
    assert after["left_out"]["sentence"] == (
        "12 votes left out of these figures: bob's 12 votes (excluded by an owner: votes faster than reading)."
    )
    client.force_login(owner)
    page = client.get(f"/compare/{group.pk}/report/")
    assert "bob&#x27;s 12 votes (excluded by an owner: votes faster than reading)" in page.content.decode()

    tab = client.get(f"/votes/groups/{group.pk}/report/").content.decode()
    assert "24 votes on" in tab and "12 votes left out of these figures" in tab
    board = api.get(f"/api/v1/workspaces/{workspace.pk}/leaderboard/?by=prompt").json()
    assert board["votes"] == 24 and board["left_out"]["votes"] == 12

    with django_capture_on_commit_callbacks(execute=True):
        assert api.delete(exclusion_url(workspace, bob)).status_code == 204
    assert api.get(f"/api/v1/groups/{group.pk}/report/").json()["report"]["votes"] == 36


def test_the_voter_list_shows_who_is_excluded_and_why(api, workspace, voted):
    _, bob = voted
    api.put(exclusion_url(workspace, bob), {"reason": "always disagrees"}, format="json")
    entry = next(
        v for v in api.get(f"/api/v1/workspaces/{workspace.pk}/voters/").json()["voters"] if v["user"] == bob.pk
    )
    assert entry["excluded"] is True and entry["exclusion_reason"] == "always disagrees"
    # bob disagreed with the majority of others on all 12 rounds.
    assert entry["agreement_with_majority"]["agreed"] == 0
    assert {"disagrees", "outlier"} <= {flag["kind"] for flag in entry["flags"]}
    # Chatbot Arena's rule: each of bob's votes chose what none of the others' 24 votes on the comparison chose
    # (2 variants + tie + all bad = 4 choices), Fisher-combined, against 0.01 / 3 voters.
    reference = combine_pvalues([(0 + 1) / (24 + 4)] * 12, method="fisher")
    assert entry["outlier"]["p_value"] == pytest.approx(reference.pvalue)
    assert entry["outlier"]["statistic"] == pytest.approx(reference.statistic)
    assert entry["outlier"]["threshold"] == pytest.approx(0.01 / 3)
    vera = next(
        v for v in api.get(f"/api/v1/workspaces/{workspace.pk}/voters/").json()["voters"] if v["username"] == "vera"
    )
    assert vera["outlier"]["p_value"] > vera["outlier"]["threshold"] and vera["flags"] == []


def test_only_owners_exclude_and_a_reason_is_required(api, api_for, workspace, editor, stranger, voted):
    _, bob = voted
    assert api_for(editor).put(exclusion_url(workspace, bob), {"reason": "x"}, format="json").status_code == 403
    assert api_for(stranger).put(exclusion_url(workspace, bob), {"reason": "x"}, format="json").status_code == 404
    response = api.put(exclusion_url(workspace, bob), {"reason": "   "}, format="json")
    assert response.status_code == 400 and "reason" in response.json()
    response = api.put(exclusion_url(workspace, stranger), {"reason": "not ours"}, format="json")
    assert response.status_code == 400 and "user" in response.json()


def test_the_judges_agreement_with_the_team_leaves_excluded_votes_out_and_says_so(api, client, owner, workspace, voted):
    group, bob = voted
    judge = JudgeConfig.objects.create(workspace=workspace, name="strict", model="simulated::thinker")
    for round_ in group.rounds.all():
        Verdict.objects.create(
            round=round_, judge=judge, judge_name=judge.name, judge_model=judge.model, scale=judge.scale,
            mode=judge.mode, status=VerdictStatus.DONE, finished_at=timezone.now(),
            winner=round_.outputs.get(variant__position=2),
        )  # fmt: skip
    client.force_login(owner)
    url = f"/votes/judges/{judge.pk}/agreement/"
    assert "left out" not in client.get(url).content.decode()
    api.put(exclusion_url(workspace, bob), {"reason": "clicks without reading"}, format="json")
    partial = client.get(url).content.decode()
    assert (
        "12 votes left out of these figures: bob&#x27;s 12 votes (excluded by an owner: clicks without reading)."
        in partial
    )
    rows = judge_team_agreement(judge, judge_round_choices(judge))
    assert rows.with_ties.rounds == 12 and rows.with_ties.agreed == 0  # the team's majority is now owner and vera's
