"""Voter quality: agreement with the others' majority and with the judge (kappa against scikit-learn), position
preference in blind votes (binomial test against scipy), votes too fast to have read the answers, volume; owners
see everyone's flags, others only their own figures."""

import random
from collections import Counter

import numpy as np
import pytest
from django.utils import timezone
from scipy.stats import binomtest
from sklearn.metrics import cohen_kappa_score
from statsmodels.stats.inter_rater import cohens_kappa

from judging.models import JudgeConfig, Verdict, VerdictStatus
from lab.models import Role
from tests.fixtures.factories import add_member
from tests.fixtures.voting_factories import finished_round, voting_group
from voting.services import vote_cast

pytestmark = pytest.mark.django_db


def quality(client, workspace) -> dict:
    response = client.get(f"/api/v1/workspaces/{workspace.pk}/voters/")
    assert response.status_code == 200, response.content
    return response.json()


def voter(body, username) -> dict:
    return next(entry for entry in body["voters"] if entry["username"] == username)


def category(round_, choice) -> str:
    """The agreement's categories: the answer's place in variant order, or "none" for a tie or all bad."""
    if choice in ("tie", "all_bad"):
        return "none"
    return str(list(round_.outputs.order_by("variant__position").values_list("pk", flat=True)).index(choice))


def test_agreement_with_the_majority_of_others_is_cohens_kappa(api, workspace, owner):
    rng = random.Random(7)
    others = [add_member(workspace, f"other{i}", Role.VIEWER) for i in range(3)]
    group = voting_group(workspace, owner)
    mine, majority = [], []
    for _ in range(40):
        round_ = finished_round(group, owner)
        ids = list(round_.outputs.order_by("variant__position").values_list("pk", flat=True))
        options = [*ids, "tie"]
        truth = rng.choice(ids)
        votes = [truth if rng.random() < 0.8 else rng.choice(options) for _ in others]
        for user, choice in zip(others, votes, strict=True):
            vote_cast(round=round_, user=user, **({"verdict": choice} if choice == "tie" else {"output_id": choice}))
        me = truth if rng.random() < 0.6 else rng.choice(options)
        vote_cast(round=round_, user=owner, **({"verdict": me} if me == "tie" else {"output_id": me}))
        ranked = Counter(votes).most_common(2)
        if len(ranked) == 1 or ranked[0][1] > ranked[1][1]:
            mine.append(category(round_, me))
            majority.append(category(round_, ranked[0][0]))

    figures = voter(quality(api, workspace), "owner")["agreement_with_majority"]
    assert figures["rounds"] == len(mine)
    assert figures["agreed"] == sum(a == b for a, b in zip(mine, majority, strict=True))
    assert figures["kappa"] == pytest.approx(cohen_kappa_score(mine, majority))
    labels = sorted(set(mine) | set(majority))
    table = np.zeros((len(labels), len(labels)))
    for a, b in zip(mine, majority, strict=True):
        table[labels.index(a), labels.index(b)] += 1
    reference = cohens_kappa(table)
    assert (figures["kappa_low"], figures["kappa_high"]) == pytest.approx((reference.kappa_low, reference.kappa_upp))
    assert voter(quality(api, workspace), "owner")["votes"] == 40


def test_agreement_with_the_judge(api, workspace, owner):
    group = voting_group(workspace, owner, n=2)
    judge = JudgeConfig.objects.create(workspace=workspace, name="strict", model="simulated::thinker")
    mine, judged = [], []
    for index in range(12):
        round_ = finished_round(group, owner)
        first, second = round_.outputs.order_by("variant__position")
        winner = first if index % 3 else second
        Verdict.objects.create(
            round=round_, judge=judge, judge_name=judge.name, judge_model=judge.model, scale=judge.scale,
            mode=judge.mode, status=VerdictStatus.DONE, finished_at=timezone.now(), winner=winner,
        )  # fmt: skip
        vote_cast(round=round_, user=owner, output_id=first.pk)
        mine.append(category(round_, first.pk))
        judged.append(category(round_, winner.pk))
    figures = voter(quality(api, workspace), "owner")["agreement_with_judge"]
    assert figures["rounds"] == 12 and figures["agreed"] == 8
    assert figures["kappa"] == pytest.approx(cohen_kappa_score(mine, judged))


def test_a_voter_who_always_picks_the_first_blind_column_is_flagged_with_a_binomial_test(api, workspace, owner):
    group = voting_group(workspace, owner, n=3, blind=True)
    for _ in range(12):
        round_ = finished_round(group, owner)
        shown = api.get(f"/api/v1/rounds/{round_.pk}/").json()["outputs"]  # the blind column order I see
        api.post(f"/api/v1/rounds/{round_.pk}/vote/", {"output": shown[0]["id"]})
    entry = voter(quality(api, workspace), "owner")
    position = entry["position_preference"]
    assert (position["picks"], position["first"], position["last"]) == (12, 12, 0)
    assert position["p_value"] == pytest.approx(binomtest(12, 12, 0.5).pvalue)
    assert position["chance_first"] == pytest.approx(1 / 3)
    flag = next(flag for flag in entry["flags"] if flag["kind"] == "position")
    assert "first column 12 times" in flag["evidence"]


def test_votes_faster_than_the_answers_could_be_read_are_flagged(api, workspace, owner):
    group = voting_group(workspace, owner, n=2)
    for _ in range(6):
        round_ = finished_round(group, owner)
        round_.outputs.update(text=" ".join(["word"] * 400))  # 800 words to read in a round
        body = api.get(f"/api/v1/workspaces/{workspace.pk}/inbox/next/").json()
        api.post(f"/api/v1/rounds/{body['round']['id']}/vote/", {"verdict": "tie"})  # within a second or two
    entry = voter(quality(api, workspace), "owner")
    assert entry["speed"]["timed"] == 6 and entry["speed"]["fast"] == 6
    assert entry["speed"]["median_wps"] > 12
    assert any(flag["kind"] == "too_fast" for flag in entry["flags"])


def test_a_careful_voter_has_no_flags(api, workspace, owner):
    round_ = finished_round(voting_group(workspace, owner), owner)
    vote_cast(round=round_, user=owner, verdict="tie")
    entry = voter(quality(api, workspace), "owner")
    assert entry["flags"] == [] and entry["speed"]["timed"] == 0 and entry["votes"] == 1


def test_owners_see_every_voter_and_others_only_themselves(api, api_for, workspace, owner, stranger):
    viewer = add_member(workspace, "vera", Role.VIEWER)
    round_ = finished_round(voting_group(workspace, owner), owner)
    vote_cast(round=round_, user=owner, verdict="tie")
    vote_cast(round=round_, user=viewer, verdict="all_bad")
    assert {entry["username"] for entry in quality(api, workspace)["voters"]} == {"owner", "vera"}
    assert [entry["username"] for entry in quality(api_for(viewer), workspace)["voters"]] == ["vera"]
    assert quality(api_for(viewer), workspace)["overall"]["votes"] == 2
    assert api_for(stranger).get(f"/api/v1/workspaces/{workspace.pk}/voters/").status_code == 404
