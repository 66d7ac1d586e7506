"""A vote carries copies of its comparison and of its winner's variant, which reports read instead of joining rounds
and answers: the copies follow every change of mind, and the database refuses a winner without its variant."""

import pytest
from django.db import IntegrityError, transaction

from lab.stats.report import build_report
from lab.stats.votes import RoundVote
from tests.fixtures.factories import add_member
from tests.fixtures.voting_factories import finished_round, voting_group
from voting.models import Vote
from voting.reports.comparison import group_report
from voting.services import vote_cast


def stored(round_, user) -> tuple:
    return Vote.objects.values_list("group_id", "choice", "output_id", "variant_id").get(round=round_, user=user)


@pytest.mark.django_db
def test_a_vote_keeps_its_comparison_and_winner_through_every_change_of_mind(workspace, owner):
    group, other_group = voting_group(workspace, owner), voting_group(workspace, owner)
    colleague = add_member(workspace, "cole")
    first, second = finished_round(group, owner), finished_round(group, owner)
    a, b, _ = first.outputs.order_by("variant__position")
    variants = list(group.variants.order_by("position"))
    keys = tuple(str(variant.pk) for variant in variants)
    labels = {str(variant.pk): variant.label for variant in variants}
    vote_cast(round=second, user=colleague, verdict="all_bad")  # cast first, so first in the report's order
    elsewhere = finished_round(other_group, owner)
    vote_cast(round=elsewhere, user=owner, output_id=elsewhere.outputs.get(variant__position=1).pk)

    for change, winner in [({"output_id": a.pk}, a), ({"output_id": b.pk}, b), ({"verdict": "tie"}, None)]:
        vote_cast(round=first, user=owner, **change)

        if winner is None:
            assert stored(first, owner) == (group.pk, "tie", None, None)
        else:
            assert stored(first, owner) == (group.pk, "winner", winner.pk, winner.variant_id)
        outcome = str(winner.variant_id) if winner else "tie"
        expected = build_report(
            variants=keys, votes=[RoundVote(keys, "all_bad"), RoundVote(keys, outcome)], labels=labels
        )
        assert group_report(group)["report"] == expected
    assert stored(second, colleague) == (group.pk, "all_bad", None, None)
    assert stored(elsewhere, owner)[0] == other_group.pk


@pytest.mark.django_db
def test_the_database_refuses_a_winner_without_its_variant_and_a_verdict_with_one(workspace, owner):
    group = voting_group(workspace, owner)
    round_ = finished_round(group, owner)
    answer = round_.outputs.get(variant__position=1)
    vote = vote_cast(round=round_, user=owner, output_id=answer.pk)
    with pytest.raises(IntegrityError), transaction.atomic():
        Vote.objects.filter(pk=vote.pk).update(variant=None)

    vote_cast(round=round_, user=owner, verdict="tie")
    with pytest.raises(IntegrityError), transaction.atomic():
        Vote.objects.filter(pk=vote.pk).update(variant=answer.variant)
