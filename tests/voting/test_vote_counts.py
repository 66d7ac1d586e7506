"""Reports and leaderboards read votes as counts per kind of vote (Postgres counts them), and the statistics give
the same figures from those counts as from the votes one by one, and as the vote-by-vote reading gave before."""

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from lab.models import Role
from lab.stats.ratings import MIN_RESAMPLES, bradley_terry, match_table, shape_table, vote_shapes
from lab.stats.report import build_report
from lab.stats.votes import ALL_BAD, TIE, RoundVote
from tests.fixtures.compare_factories import make_group
from tests.fixtures.factories import add_member
from tests.fixtures.voting_factories import finished_round, voting_group
from voting.reports.comparison import (
    RatedVariants,
    group_report,
    group_round_votes,
    group_variants,
    group_vote_counts,
    kinds_shapes,
    kinds_table,
    shown_by_group,
    shown_of,
    vote_records,
    vote_shapes_of,
)
from voting.reports.leaderboard import LeaderboardFilters, entities, leaderboard, workspace_variants, workspace_votes
from voting.services import vote_cast
from voting.voters.exclusions import counted
from voting.voters.services import voter_exclude

VARIANTS = ["a", "b", "c"]
SHOWN = st.sampled_from([("a", "b"), ("a", "c"), ("b", "c"), ("a", "b", "c")])


@st.composite
def votes(draw, max_size: int = 80) -> list[RoundVote]:
    shown = draw(st.lists(SHOWN, max_size=max_size))
    return [RoundVote(each, draw(st.sampled_from([*each, TIE, ALL_BAD]))) for each in shown]


@settings(max_examples=40, deadline=None)
@given(votes())
def test_a_report_from_counts_equals_the_report_from_the_votes_one_by_one(vote_list):
    one_by_one = build_report(variants=VARIANTS, votes=vote_list, labels={"a": "Alpha"})
    assert build_report(variants=VARIANTS, votes=Counter(vote_list), labels={"a": "Alpha"}) == one_by_one


@settings(max_examples=10, deadline=None)
@given(votes(), st.integers(0, 3))
def test_ratings_from_counts_equal_the_ratings_from_the_votes_one_by_one(vote_list, seed):
    one_by_one = bradley_terry(vote_list, n_resamples=MIN_RESAMPLES, seed=seed)
    assert bradley_terry(Counter(vote_list), n_resamples=MIN_RESAMPLES, seed=seed) == one_by_one


KEY_OF = {"v1": "gpt", "v2": "claude", "v3": "llama", "v4": "gpt", "v5": "mistral"}


def mixed_votes() -> list[RoundVote]:
    """Two- and three-way votes over five variants standing for four models (v1 and v4 both gpt), with ties and
    all-bad votes."""
    rng = np.random.default_rng(13)
    shown_sets = [
        ("v1", "v2"), ("v1", "v3"), ("v2", "v4"), ("v3", "v5"), ("v1", "v2", "v3"), ("v2", "v4", "v5"),
        ("v1", "v4", "v5"),
    ]  # fmt: skip
    result = []
    for _ in range(400):
        shown = shown_sets[rng.integers(len(shown_sets))]
        draw = rng.random()
        outcome = TIE if draw < 0.1 else ALL_BAD if draw < 0.15 else shown[rng.integers(len(shown))]
        result.append(RoundVote(shown, outcome))
    return result


def test_ratings_ranks_and_tallies_are_those_the_vote_by_vote_table_gave():
    # Figures of the earlier implementation (one table row per kind of vote, before rows implying the same
    # matches were merged, and numpy's multinomial for the resamples) on these votes: counts and ranks to the last
    # digit, ratings to 1e-6 points (that implementation's fit, scipy's trust-exact, stopped at a gradient of
    # 3e-8, 4e-8 points from the maximum; the Newton fit now reaches it to rounding). Its intervals came from
    # the same bootstrap distribution drawn another way, so they differ by resampling noise only (973–1041 then
    # for claude, for instance).
    ratings = bradley_terry(mixed_votes(), key_of=KEY_OF)
    assert [(r.key, r.rank, r.matches, r.wins, r.losses, r.ties, r.one_sided) for r in ratings] == [
        ("claude", 1, 283, 112, 104, 67, False),
        ("gpt", 1, 403, 161, 157, 85, False),
        ("mistral", 1, 233, 88, 89, 56, False),
        ("llama", 1, 197, 79, 90, 28, False),
    ]
    expected = [1011.1028270866204, 1005.2569575001509, 998.8382615463429, 984.8019538668858]
    assert [r.rating for r in ratings] == pytest.approx(expected, abs=1e-6)
    for rating in ratings:
        assert rating.ci_low < rating.rating < rating.ci_high


def test_votes_that_imply_the_same_matches_share_a_row_and_give_the_same_intervals():
    # By model, v1 and v4 are both gpt: a v1 win over v2 and a v4 win over v2 are the same match, and a tie and
    # an all-bad vote tie the same pairs, so each pair of such votes is one row of the table.
    by_variant = (
        [RoundVote(("v1", "v2"), "v1")] * 5
        + [RoundVote(("v2", "v4"), "v4")] * 3
        + [RoundVote(("v1", "v2"), "v2")] * 4
        + [RoundVote(("v1", "v3"), TIE)] * 2
        + [RoundVote(("v1", "v3"), ALL_BAD)] * 2
        + [RoundVote(("v2", "v3"), "v3")] * 3
        + [RoundVote(("v1", "v3"), "v1")] * 2
        + [RoundVote(("v2", "v3"), "v2")]
    )
    by_model = (
        [RoundVote(("gpt", "claude"), "gpt")] * 8
        + [RoundVote(("gpt", "claude"), "claude")] * 4
        + [RoundVote(("gpt", "llama"), TIE)] * 4
        + [RoundVote(("claude", "llama"), "llama")] * 3
        + [RoundVote(("gpt", "llama"), "gpt")] * 2
        + [RoundVote(("claude", "llama"), "claude")]
    )
    key_of = {"v1": "gpt", "v2": "claude", "v3": "llama", "v4": "gpt"}
    assert len(match_table(by_variant, key_of).counts) == len(match_table(by_model).counts) == 6
    assert bradley_terry(by_variant, key_of=key_of, seed=4) == bradley_terry(by_model, seed=4)


@st.composite
def comparisons_and_kinds(draw) -> tuple[list[tuple[int, int, str]], dict[tuple[int, int | None], int]]:
    """Comparisons of one to four variants (ids in no particular order, several standing for the same model) as
    (comparison id, variant id, model), and votes counted per comparison and winner (None: a tie or all bad)."""
    ids = iter(draw(st.permutations(range(100, 140))))
    variants = [
        (group, next(ids), draw(st.sampled_from(["gpt", "claude", "llama", "mistral"])))
        for group in draw(st.lists(st.integers(1, 30), min_size=1, max_size=8, unique=True))
        for _ in range(draw(st.integers(1, 4)))
    ]
    winners = [(group, pk) for group, pk, _ in variants] + [(group, None) for group in {g for g, _, _ in variants}]
    kinds = draw(st.dictionaries(st.sampled_from(winners), st.integers(1, 50), max_size=20))
    return variants, kinds


@settings(max_examples=60, deadline=None)
@given(comparisons_and_kinds())
def test_the_leaderboards_table_of_counted_kinds_is_the_table_of_their_vote_shapes(read):
    variants, kinds = read
    shapes = kinds_shapes(kinds, shown_of((g, pk) for g, pk, _ in variants), {str(pk): m for _, pk, m in variants})
    table, votes = kinds_table(kinds, RatedVariants.of(*zip(*variants, strict=True)))
    expected = shape_table(shapes)
    assert (table.keys, table.counts.tolist(), table.tallies) == (
        expected.keys,
        expected.counts.tolist(),
        expected.tallies,
    )
    assert table.contributions.toarray().tolist() == expected.contributions.toarray().tolist()
    assert votes == sum(shapes.values())


def test_counted_kinds_outside_the_variants_read_are_refused():
    variants = RatedVariants.of([1, 1], [10, 11], ["gpt", "claude"])
    with pytest.raises(ValueError):
        kinds_table({(2, None): 3}, variants)
    with pytest.raises(ValueError):
        kinds_table({(1, 12): 3}, variants)
    assert kinds_table({(1, 11): 3}, variants)[1] == 3


# Per round, each voter's choice: a variant position (1-based), "tie" or "all_bad".
BALLOTS = [
    [1, 1, 2], [1, "tie", 1], [3, 1, "all_bad"], [2, 2, 1], [1, 3, "tie"], [1, 1, 1], [2, 1, 3], [1, 2, 1],
    [3, 3, 1], [1, 1, 2], [1, "all_bad", 2], [2, 1, 1], [1, 1, 3], [1, 2, 2],
]  # fmt: skip


@pytest.fixture
def voted(workspace, owner):
    """Two comparisons of the workspace (three prompt versions; two models) voted on by three members, one of
    whom an owner has since excluded."""
    voters = [owner, add_member(workspace, "uma", Role.EDITOR), add_member(workspace, "vic", Role.VIEWER)]
    prompts = voting_group(workspace, owner)
    models = make_group(workspace, owner, models=["simulated::instant", "simulated::writer"])
    for group in (prompts, models):
        for choices in BALLOTS:
            round_ = finished_round(group, owner)
            for voter, choice in zip(voters, choices, strict=True):
                if choice in (TIE, ALL_BAD):
                    vote_cast(round=round_, user=voter, verdict=choice)
                else:
                    position = min(choice, group.variants.count())
                    vote_cast(round=round_, user=voter, output_id=round_.outputs.get(variant__position=position).pk)
    voter_exclude(workspace=workspace, user_id=voters[2].pk, reason="Voted without reading.", by=owner)
    return prompts, models


@pytest.mark.django_db
def test_a_comparisons_counts_are_its_counted_votes_and_give_the_report_its_votes_gave(voted):
    for group in voted:
        one_by_one = group_round_votes(group)
        assert group_vote_counts(group) == Counter(one_by_one)
        variants = group_variants(group)
        expected = build_report(
            variants=[row.key for row in variants], votes=one_by_one, labels={row.key: row.label for row in variants}
        )
        assert group_report(group)["report"] == expected
    assert sum(group_vote_counts(voted[0]).values()) == len(BALLOTS) * 2  # the excluded voter's votes left out


@pytest.mark.django_db
def test_a_workspaces_vote_shapes_are_its_counted_votes_and_give_the_ratings_its_votes_gave(workspace, voted):
    filters = LeaderboardFilters()
    votes = counted(workspace_votes(workspace, filters), workspace.pk)
    shown = shown_by_group(workspace_variants(workspace, filters))
    one_by_one = vote_records(votes, shown)
    key_of, _ = entities(workspace, filters, "prompt")
    assert vote_shapes_of(votes, shown, key_of) == vote_shapes(one_by_one, key_of)
    board = leaderboard(workspace, by="prompt")
    assert board["votes"] == len(one_by_one) == 2 * 2 * len(BALLOTS)
    expected = bradley_terry(one_by_one, key_of=key_of)
    assert [(entry["key"], entry["rating"], entry["ci_low"], entry["rank"]) for entry in board["ratings"]] == [
        (rating.key, rating.rating, rating.ci_low, rating.rank) for rating in expected
    ]
