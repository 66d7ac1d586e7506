"""The vote counts the database keeps (VoteCount) always equal a recount of the votes, whatever path writes or
deletes votes, and reports and leaderboards read them."""

from collections import Counter
from datetime import timedelta

import pytest
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection, transaction
from django.db.models import F
from django.test.utils import CaptureQueriesContext
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compare.models import CompareGroup, Output, Round
from compare.services import group_delete
from lab.models import Role
from lab.stats.report import build_report
from tests.fixtures.compare_factories import make_group
from tests.fixtures.factories import add_member
from tests.fixtures.voting_factories import finished_round, voting_group
from voting.models import Vote, VoteCount
from voting.reports.comparison import (
    group_report,
    group_round_votes,
    group_variants,
    group_vote_counts,
    kinds_shapes,
    shown_by_group,
    vote_shapes_of,
)
from voting.reports.leaderboard import (
    LeaderboardFilters,
    entities,
    leaderboard,
    workspace_variants,
    workspace_vote_counts,
    workspace_votes,
)
from voting.reports.vote_counts import counted_kinds, disagreements, kept, recounted
from voting.services import vote_cast, vote_withdraw
from voting.voters.exclusions import counted
from voting.voters.services import voter_exclude, voter_readmit

VOTERS, ROUNDS_PER_GROUP = 3, 3
VERDICTS = ["tie", "all_bad"]

# One step of what people and owners do: cast (a first vote, or a change when one is there), withdraw, delete a
# round, an answer or a whole comparison, move a vote to another day (a raw UPDATE), exclude or readmit a voter.
STEPS = st.one_of(
    st.tuples(
        st.just("cast"),
        st.integers(0, 1),
        st.integers(0, ROUNDS_PER_GROUP - 1),
        st.integers(0, VOTERS - 1),
        st.sampled_from([1, 2, 3, *VERDICTS]),
    ),
    st.tuples(st.just("withdraw"), st.integers(0, 1), st.integers(0, ROUNDS_PER_GROUP - 1), st.integers(0, 2)),
    st.tuples(st.just("delete_round"), st.integers(0, 1), st.integers(0, ROUNDS_PER_GROUP - 1)),
    st.tuples(st.just("delete_answer"), st.integers(0, 1), st.integers(0, ROUNDS_PER_GROUP - 1), st.integers(1, 3)),
    st.tuples(st.just("delete_group"), st.integers(0, 1)),
    st.tuples(st.just("backdate"), st.integers(0, 1), st.integers(0, ROUNDS_PER_GROUP - 1), st.integers(1, 40)),
    st.tuples(st.just("exclude"), st.integers(0, VOTERS - 1)),
    st.tuples(st.just("readmit"), st.integers(0, VOTERS - 1)),
)


@pytest.fixture
def lab(workspace, owner):
    """A workspace with a comparison of three prompt versions and one of two models, three finished rounds each,
    and three voters."""
    voters = [owner, add_member(workspace, "uma", Role.EDITOR), add_member(workspace, "vic", Role.VIEWER)]
    groups = [
        voting_group(workspace, owner),
        make_group(workspace, owner, models=["simulated::instant", "simulated::writer"]),
    ]
    rounds = [[finished_round(group, owner) for _ in range(ROUNDS_PER_GROUP)] for group in groups]
    return workspace, owner, voters, groups, rounds


def play(step: tuple, workspace, owner, voters, groups, rounds) -> None:
    kind, *args = step
    if kind in ("cast", "withdraw", "delete_round", "delete_answer", "backdate"):
        round_ = Round.objects.filter(pk=rounds[args[0]][args[1]].pk).select_related("group").first()
        if round_ is None:
            return
    if kind == "cast":
        voter, choice = voters[args[2]], args[3]
        try:
            if choice in VERDICTS:
                vote_cast(round=round_, user=voter, verdict=choice)
            else:
                answer = round_.outputs.filter(variant__position=choice).first()
                vote_cast(round=round_, user=voter, output_id=answer.pk if answer else -1)
        except ValidationError:
            pass  # an answer deleted earlier in the sequence, or a position the comparison does not have
    elif kind == "withdraw":
        vote_withdraw(round=round_, user=voters[args[2]])
    elif kind == "delete_round":
        round_.delete()
    elif kind == "delete_answer":
        Output.objects.filter(round=round_, variant__position=args[2]).delete()
    elif kind == "delete_group":
        if (group := CompareGroup.objects.filter(pk=groups[args[0]].pk).first()) is not None:
            group_delete(group=group, user=owner)
    elif kind == "backdate":
        Vote.objects.filter(round=round_).update(created_at=F("created_at") - timedelta(days=args[2]))
    elif kind == "exclude":
        voter_exclude(workspace=workspace, user_id=voters[args[0]].pk, reason="Voted without reading.", by=owner)
    elif kind == "readmit":
        voter_readmit(workspace=workspace, user_id=voters[args[0]].pk)


def raw_leaderboard_shapes(workspace, filters: LeaderboardFilters):
    """The leaderboard's vote shapes read from the votes themselves, as before there were kept counts."""
    shown = shown_by_group(workspace_variants(workspace, filters))
    key_of, _ = entities(workspace, filters, "model")
    return vote_shapes_of(counted(workspace_votes(workspace, filters), workspace.pk), shown, key_of)


def kept_leaderboard_shapes(workspace, filters: LeaderboardFilters):
    shown = shown_by_group(workspace_variants(workspace, filters))
    key_of, _ = entities(workspace, filters, "model")
    counts = workspace_vote_counts(workspace, filters)
    votes = workspace_votes(workspace, filters)
    return kinds_shapes(counted_kinds(counts, votes, workspace.pk, ("group_id", "variant_id")), shown, key_of)


@pytest.mark.django_db
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(STEPS, max_size=25))
def test_the_counts_equal_a_recount_of_the_votes_after_any_sequence_of_votes_and_deletes(lab, steps):
    workspace, owner, voters, groups, rounds = lab
    with transaction.atomic():  # each example starts from the fixture's comparisons, without votes
        for step in steps:
            play(step, workspace, owner, voters, groups, rounds)
        assert kept() == recounted() and disagreements() == []
        for group in CompareGroup.objects.filter(pk__in=[group.pk for group in groups]):
            assert group_vote_counts(group) == Counter(group_round_votes(group))
        week_ago = (timezone.now() - timedelta(days=7)).date()
        for filters in (LeaderboardFilters(), LeaderboardFilters(since=week_ago), LeaderboardFilters(until=week_ago)):
            assert kept_leaderboard_shapes(workspace, filters) == raw_leaderboard_shapes(workspace, filters)
        transaction.set_rollback(True)


@pytest.mark.django_db
def test_a_changed_vote_moves_from_one_count_to_the_other_and_a_same_vote_again_changes_nothing(lab):
    _, owner, _, groups, rounds = lab
    round_ = rounds[0][0]
    first, second = (round_.outputs.get(variant__position=p) for p in (1, 2))
    vote_cast(round=round_, user=owner, output_id=first.pk)
    vote_cast(round=round_, user=owner, output_id=first.pk)
    assert group_vote_counts(groups[0]) == Counter(group_round_votes(groups[0]))
    assert sum(group_vote_counts(groups[0]).values()) == 1
    vote_cast(round=round_, user=owner, output_id=second.pk)
    vote_cast(round=round_, user=owner, verdict="tie")
    counts = dict(VoteCount.objects.filter(group=groups[0]).values_list("variant_id", "votes"))
    assert counts == {first.variant_id: 0, second.variant_id: 0, None: 1}


@pytest.mark.django_db
def test_a_deleted_account_takes_its_votes_from_the_counts(lab):
    _, owner, voters, groups, rounds = lab
    for round_ in rounds[1]:
        for voter in voters:
            vote_cast(round=round_, user=voter, output_id=round_.outputs.get(variant__position=2).pk)
    voters[1].delete()
    assert sum(group_vote_counts(groups[1]).values()) == ROUNDS_PER_GROUP * (VOTERS - 1)
    assert disagreements() == []


@pytest.mark.django_db
def test_the_report_and_the_leaderboard_read_the_kept_counts_and_the_check_finds_and_repairs_a_drift(lab, capsys):
    workspace, owner, voters, groups, rounds = lab
    for round_ in rounds[0] + rounds[1]:
        for voter in voters:
            vote_cast(round=round_, user=voter, output_id=round_.outputs.get(variant__position=1).pk)
    call_command("vote_counts_check")
    assert "agree" in capsys.readouterr().out
    before_report, before_board = group_report(groups[0])["report"], leaderboard(workspace)

    # Counts changed behind the votes' back: the report and the leaderboard show it, so they read the counts.
    VoteCount.objects.filter(group=groups[0]).update(votes=F("votes") + 2)
    assert group_report(groups[0])["report"]["votes"] == before_report["votes"] + 2
    assert leaderboard(workspace)["votes"] == before_board["votes"] + 2
    with pytest.raises(CommandError, match="disagree"):
        call_command("vote_counts_check")
    assert "kept 11, the votes give 9" in capsys.readouterr().out

    call_command("vote_counts_check", "--repair")
    assert "Rebuilt" in capsys.readouterr().out
    assert disagreements() == []
    assert group_report(groups[0])["report"] == before_report
    assert leaderboard(workspace) == before_board


@pytest.mark.django_db
def test_a_report_reads_the_counts_and_not_the_votes(lab):
    workspace, owner, voters, groups, rounds = lab
    group = groups[0]
    for round_ in rounds[0]:
        for voter in voters:
            vote_cast(round=round_, user=voter, verdict="tie")
    variants = group_variants(group)
    with CaptureQueriesContext(connection) as captured:
        counts = group_vote_counts(group, variants)
    assert sum(counts.values()) == ROUNDS_PER_GROUP * VOTERS
    tables = " ".join(query["sql"] for query in captured.captured_queries)
    assert '"voting_votecount"' in tables and '"voting_vote"' not in tables
    expected = build_report(variants=[row.key for row in variants], votes=group_round_votes(group))
    assert build_report(variants=[row.key for row in variants], votes=counts) == expected
