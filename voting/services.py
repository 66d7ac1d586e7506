"""Writes for votes: cast (or replace, or withdraw) one vote per person per round, then tell everyone the new tally."""

from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.utils import timezone

from compare.blind import tally_for_channel
from compare.models import Output, OutputStatus, Round, RoundStatus
from lab.events import VOTE_TALLY, vote_tally
from lab.realtime import broadcast, group_channel

from .models import Choice, Vote, VoteCount
from .reports.cache import votes_changed
from .reports.vote_counts import recounted
from .selectors import round_tally

VOTABLE_ROUNDS = (RoundStatus.DONE, RoundStatus.CANCELLED, RoundStatus.FAILED)


@transaction.atomic
def vote_cast(*, round: Round, user, output_id: int | None = None, verdict: str | None = None) -> Vote:
    """Record the user's choice for a round; a second call replaces the first (never a second vote)."""
    if (output_id is None) == (verdict is None):
        raise ValidationError({"non_field_errors": "Choose either an answer (output) or a verdict (tie or all_bad)."})
    if verdict is not None and verdict not in (Choice.TIE, Choice.ALL_BAD):
        raise ValidationError({"verdict": "A verdict is either 'tie' or 'all_bad'."})
    if round.status not in VOTABLE_ROUNDS:
        raise ValidationError({"round": "This round is still running; vote when its answers are in."})
    output = None
    if output_id is not None:
        output = Output.objects.filter(pk=output_id, round=round).first()
        if output is None:
            raise ValidationError({"output": "That answer is not part of this round."})
        if output.status != OutputStatus.OK:
            raise ValidationError({"output": "Only a complete answer can win; choose 'all bad' if none is good."})
    choice = Choice.WINNER if output else Choice(verdict)
    # One statement, atomic in the database: concurrent double-clicks or two tabs can't make two rows. The
    # comparison and the winner's variant are stored on the vote too, for reports (see Vote); a replaced vote
    # takes its new winner's variant, or none.
    Vote.objects.bulk_create(
        [
            Vote(
                round=round,
                group_id=round.group_id,
                user=user,
                choice=choice,
                output=output,
                variant_id=output.variant_id if output else None,
                updated_at=timezone.now(),
            )
        ],
        update_conflicts=True,
        unique_fields=["round", "user"],
        update_fields=["choice", "output", "variant", "updated_at"],
    )
    vote = Vote.objects.get(round=round, user=user)
    _after_votes_commit(round)
    return vote


@transaction.atomic
def vote_withdraw(*, round: Round, user) -> bool:
    """Remove the user's vote on a round (the inbox's undo); False when there was none."""
    deleted, _ = Vote.objects.filter(round=round, user=user).delete()
    if deleted:
        _after_votes_commit(round)
    return bool(deleted)


def _after_votes_commit(round: Round) -> None:
    """Once the round's votes change: the reports' cache first, so it stops serving the old counts whether or not
    the live update gets out. Robust: a cache that is down (Redis away) is logged; the change is committed either
    way (and a restarted Redis holds no stale report). The broadcast never raises (lab.realtime)."""
    transaction.on_commit(lambda: votes_changed(round), robust=True)
    transaction.on_commit(lambda: broadcast_tally(round))


def broadcast_tally(round: Round) -> None:
    # The round comes with its comparison (round_for_user), so blind mode's rule reads no row.
    tally = tally_for_channel(round, round_tally(round))
    broadcast(group_channel(round.group_id), VOTE_TALLY, **vote_tally(round=round.pk, **tally))


@transaction.atomic
def vote_counts_rebuild() -> int:
    """Replace the kept vote counts by the votes' recount (after `manage.py vote_counts_check` found them apart);
    returns how many kinds there are. On Postgres the votes are locked against writes meanwhile (reads go on), so
    no vote is cast between the recount and the new counts."""
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("LOCK TABLE voting_vote IN SHARE MODE")
    VoteCount.objects.all().delete()
    actual = recounted()
    VoteCount.objects.bulk_create(
        VoteCount(group_id=group_id, choice=choice, variant_id=variant_id, day=day, votes=n)
        for (group_id, choice, variant_id, day), n in actual.items()
    )
    return len(actual)
