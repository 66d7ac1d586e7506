"""The report and the leaderboard read the set of votes: the same votes stored in another order (other row ids,
other cast order) give the same figures, word for word."""

import json

import pytest

from lab.models import Role
from tests.fixtures.compare_factories import make_group
from tests.fixtures.factories import add_member
from tests.fixtures.voting_factories import finished_round, voting_group
from voting.models import Vote
from voting.reports.comparison import group_report
from voting.reports.leaderboard import By, leaderboard
from voting.services import vote_cast

pytestmark = pytest.mark.django_db

# Per round, each voter's choice: a variant position (1-based) or "tie".
BALLOTS = [
    [1, 1, 2], [1, "tie", 1], [3, 1, 1], [2, 2, 1], [1, 3, "tie"], [1, 1, 1], [2, 1, 3], [1, 2, 1],
    [3, 3, 1], [1, 1, 2], [1, "tie", 2], [2, 1, 1], [1, 1, 3], [1, 2, 2],
]  # fmt: skip


def cast(ballots: list[tuple]) -> None:
    for round_, user, choice in ballots:
        if choice == "tie":
            vote_cast(round=round_, user=user, verdict="tie")
        else:
            vote_cast(round=round_, user=user, output_id=round_.outputs.get(variant__position=choice).pk)


def figures(workspace, groups) -> str:
    report = [group_report(group) for group in groups]
    boards = [leaderboard(workspace, by=by, seed=0) for by in (By.MODEL, By.PROMPT)]
    return json.dumps({"reports": report, "boards": boards}, sort_keys=True, allow_nan=False)


def test_votes_stored_in_another_order_give_the_same_report_and_leaderboard(workspace, owner):
    voters = [owner, add_member(workspace, "uma", Role.EDITOR), add_member(workspace, "vic", Role.VIEWER)]
    prompts = voting_group(workspace, owner)
    models = make_group(workspace, owner, models=["simulated::instant", "simulated::writer", "simulated::coder"])
    ballots = []
    for group in (prompts, models):
        for choices in BALLOTS:
            round_ = finished_round(group, owner)
            ballots += [(round_, voter, choice) for voter, choice in zip(voters, choices, strict=True)]

    cast(ballots)
    before = figures(workspace, [prompts, models])
    Vote.objects.all().delete()
    cast(list(reversed(ballots)))

    assert figures(workspace, [prompts, models]) == before
