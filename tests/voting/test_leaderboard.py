"""The workspace leaderboard: Bradley–Terry ratings across comparisons, by model or by prompt version, equal to the
statistics module on the same votes; filters, CSV, a 404 for another workspace and a 400 naming a bad field."""

import csv
import io
from datetime import timedelta

import pytest
from django.utils import timezone

from lab.models import Role
from lab.stats.ratings import bradley_terry
from lab.stats.votes import RoundVote
from tests.fixtures.compare_factories import make_group
from tests.fixtures.factories import add_member
from tests.fixtures.voting_factories import finished_round
from voting.models import Vote
from voting.prompt_identity import prompt_identity
from voting.services import vote_cast

pytestmark = pytest.mark.django_db

INSTANT, WRITER, CODER = "simulated::instant", "simulated::writer", "simulated::coder"
RATING_FIELDS = ("key", "rating", "ci_low", "ci_high", "rank", "matches", "wins", "losses", "ties", "one_sided")
RATING_FIELDS += ("not_measured", "bound_error")


class Votes:
    """Casts votes through the service and remembers them as the statistics module's records, in cast order."""

    def __init__(self):
        self.records: list[RoundVote] = []

    def cast(self, group, user, choices: list, rounds: list | None = None) -> list:
        """One round per choice (a variant position, "tie" or "all_bad"), each voted on by `user`."""
        rounds = rounds or [finished_round(group, group.created_by) for _ in choices]
        shown = tuple(str(pk) for pk in group.variants.order_by("position").values_list("pk", flat=True))
        for round_, choice in zip(rounds, choices, strict=True):
            if choice in ("tie", "all_bad"):
                vote_cast(round=round_, user=user, verdict=choice)
                self.records.append(RoundVote(shown, choice))
            else:
                output = round_.outputs.get(variant__position=choice)
                vote_cast(round=round_, user=user, output_id=output.pk)
                self.records.append(RoundVote(shown, str(output.variant_id)))
        return rounds


def board(client, workspace, **params) -> dict:
    response = client.get(f"/api/v1/workspaces/{workspace.pk}/leaderboard/", params)
    assert response.status_code == 200, response.content
    return response.json()


def figures(ratings: list[dict]) -> list[dict]:
    return [{name: rating[name] for name in RATING_FIELDS} for rating in ratings]


@pytest.fixture
def teammate(workspace):
    return add_member(workspace, "tia", Role.VIEWER)


@pytest.fixture
def model_votes(workspace, owner, teammate):
    """Three comparisons over three models, one of them of two prompts on one model; votes from two people."""
    votes = Votes()
    trio = make_group(workspace, owner, models=[INSTANT, WRITER, CODER])
    duo = make_group(workspace, owner, models=[WRITER, CODER])
    prompts = make_group(workspace, owner, models=[INSTANT, INSTANT], prompts=["Short.", "Long and careful."])
    rounds = votes.cast(trio, owner, [2, 2, 1, 3, 2, "tie", 2, 1, 2, "all_bad", 3, 2])
    votes.cast(trio, teammate, [2, 1, 2, 2, "tie", 3, 2, 2, 1, 2, 2, 3], rounds=rounds)
    votes.cast(duo, owner, [1, 2, 1, 1, "tie", 1, 2, 1])
    votes.cast(prompts, teammate, [2, 2, 1, 2, "tie", 2])
    return votes, {"trio": trio, "duo": duo, "prompts": prompts}


def key_of_model(*groups) -> dict[str, str]:
    return {str(v.pk): v.model for group in groups for v in group.variants.all()}


def test_ratings_by_model_equal_bradley_terry_on_the_same_votes(api, workspace, model_votes):
    votes, groups = model_votes

    body = board(api, workspace, by="model")

    expected = bradley_terry(votes.records, key_of=key_of_model(*groups.values()))
    assert figures(body["ratings"]) == [rating.as_shown() for rating in expected]
    assert [rating["key"] for rating in body["ratings"]][0] == WRITER
    by_model = {rating["key"]: rating for rating in body["ratings"]}
    assert by_model[WRITER]["label"] == WRITER and by_model[WRITER]["groups"] == 2
    assert by_model[INSTANT]["groups"] == 2
    # Two prompts on one model say nothing about models: without those six votes (the last cast) nothing changes.
    without_prompts = bradley_terry(votes.records[:-6], key_of=key_of_model(*groups.values()))
    assert figures(body["ratings"]) == [rating.as_shown() for rating in without_prompts]
    assert body["votes"] == 38 and body["resamples"] == 200 and body["by"] == "model"
    assert body["summary"].startswith(f"{WRITER} has the highest rating, ")


def test_ratings_by_prompt_pool_the_same_text_across_comparisons_and_show_its_labels(api, workspace, owner, teammate):
    votes = Votes()
    first = make_group(workspace, owner, models=[INSTANT, INSTANT], prompts=["Be brief.", "Explain {{topic}} fully."])
    # The same two prompts again, with edits nobody can see (trailing spaces, CRLF), under other labels and models.
    second = make_group(
        workspace, owner, models=[WRITER, CODER], prompts=["Be brief.  \r\n", "Explain {{topic}} fully.\n\n"]
    )
    second.variants.filter(position=1).update(label="terse")
    third = make_group(workspace, owner, models=[INSTANT, INSTANT], prompts=["Be brief.", "Use a table."])
    votes.cast(first, owner, [1, 1, 2, 1, "tie", 1])
    votes.cast(second, teammate, [1, 2, 1, 1])
    votes.cast(third, owner, [2, 2, "all_bad", 1, 2])

    body = board(api, workspace, by="prompt")

    key_of = {
        str(v.pk): prompt_identity(group.system_prompt, v.prompt)
        for group in (first, second, third)
        for v in group.variants.all()
    }
    assert len(set(key_of.values())) == 3
    expected = bradley_terry(votes.records, key_of=key_of)
    assert figures(body["ratings"]) == [rating.as_shown() for rating in expected]
    brief = next(r for r in body["ratings"] if r["key"] == prompt_identity("", "Be brief."))
    assert brief["labels"] == ["A", "terse"] and brief["label"] == "A / terse"
    assert brief["groups"] == 3 and brief["models"] == [INSTANT, WRITER]
    assert brief["prompt"] == "Be brief."


def test_another_workspace_has_no_leaderboard_to_show(api_for, stranger, workspace, model_votes):
    response = api_for(stranger).get(f"/api/v1/workspaces/{workspace.pk}/leaderboard/")
    assert response.status_code == 404


@pytest.mark.parametrize(
    ("params", "field"),
    [
        ({"by": "colour"}, "by"),
        ({"since": "yesterday"}, "since"),
        ({"since": "2026-05-02", "until": "2026-05-01"}, "until"),
        ({"group": "x"}, "group"),
    ],
)
def test_a_bad_parameter_is_refused_naming_the_field(api, workspace, params, field):
    response = api.get(f"/api/v1/workspaces/{workspace.pk}/leaderboard/", params)
    assert response.status_code == 400
    assert list(response.json()) == [field]


def test_a_comparison_of_another_workspace_is_refused_as_a_filter(api, api_for, stranger, workspace):
    theirs = make_group(stranger.memberships.get().workspace, stranger, models=[INSTANT, WRITER])
    response = api.get(f"/api/v1/workspaces/{workspace.pk}/leaderboard/", {"group": theirs.pk})
    assert response.status_code == 400
    assert response.json() == {"group": ["No such comparison in this workspace."]}


def test_filters_keep_only_the_votes_they_name(api, workspace, owner, teammate, model_votes):
    votes, groups = model_votes
    duo_only = board(api, workspace, group=groups["duo"].pk)
    assert duo_only["votes"] == 8 and {r["key"] for r in duo_only["ratings"]} == {WRITER, CODER}
    assert duo_only["filters"]["group"] == groups["duo"].pk

    theirs = make_group(workspace, teammate, models=[INSTANT, CODER])
    Votes().cast(theirs, owner, [1, 1, 2])
    by_teammate = board(api, workspace, author=teammate.username)
    assert by_teammate["votes"] == 3 and {r["key"] for r in by_teammate["ratings"]} == {INSTANT, CODER}

    # Move the duo's votes a month back: a date range from last week leaves them out.
    Vote.objects.filter(round__group=groups["duo"]).update(created_at=timezone.now() - timedelta(days=30))
    since = (timezone.now() - timedelta(days=7)).date().isoformat()
    recent = board(api, workspace, since=since)
    assert recent["votes"] == 38 + 3 - 8
    month = (timezone.now() - timedelta(days=30)).date().isoformat()
    assert board(api, workspace, since=month, until=month)["votes"] == 8


def test_a_workspace_without_votes_says_ratings_need_votes(api, workspace, owner):
    make_group(workspace, owner, models=[INSTANT, WRITER])
    body = board(api, workspace)
    assert body["ratings"] == [] and body["votes"] == 0
    assert body["summary"].startswith("No ratings yet")


def test_the_leaderboard_exports_as_csv(api, workspace, model_votes):
    response = api.get(f"/api/v1/workspaces/{workspace.pk}/leaderboard/", {"by": "model", "format": "csv"})
    assert response.status_code == 200 and response["Content-Type"].startswith("text/csv")
    rows = list(csv.DictReader(io.StringIO(response.content.decode())))
    assert [row["key"] for row in rows] == [r["key"] for r in board(api, workspace)["ratings"]]
    assert set(rows[0]) >= {"rank", "rating", "ci_low", "ci_high", "one_sided", "matches", "wins", "losses", "ties"}


def test_the_leaderboard_is_cached_until_a_new_vote(
    api, workspace, owner, teammate, model_votes, django_assert_max_num_queries, django_capture_on_commit_callbacks
):
    _, groups = model_votes
    first = board(api, workspace)
    with django_assert_max_num_queries(1):  # the membership check only
        assert board(api, workspace) == first

    with django_capture_on_commit_callbacks(execute=True):
        Votes().cast(groups["duo"], teammate, [2, 2, 2])
    assert board(api, workspace)["votes"] == first["votes"] + 3
