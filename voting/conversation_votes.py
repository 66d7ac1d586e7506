"""Votes on whole conversations: one per person per conversation, apart from the per-turn votes.

Each turn of a conversation is a round, voted on as any round (voting.services.vote_cast): each turn's vote counts
as one comparison in the reports. A conversation vote says which column's whole conversation was best; it is cast
at one of the conversation's later turns (whose answer names the column), kept once per conversation (its first
round) and replaced by voting again, and it is counted separately (`group_conversation_votes`), never in the
per-turn counts, so no vote is counted twice.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction

from compare.models import Output, OutputStatus, Round

from .models import Choice, ConversationVote
from .reports.cache import votes_changed
from .services import VOTABLE_ROUNDS


@transaction.atomic
def conversation_vote_cast(
    *,
    round: Round,
    user,
    output_id: int | None = None,
    verdict: str | None = None,  # noqa: A002
) -> ConversationVote:
    """Record the user's vote on the conversation `round` is a later turn of: the column of `output_id` (an answer
    of this turn) had the best conversation, or a `verdict` (tie, all bad); voting again replaces it."""
    if (output_id is None) == (verdict is None):
        raise ValidationError({"non_field_errors": "Choose either an answer (output) or a verdict (tie or all_bad)."})
    if verdict is not None and verdict not in (Choice.TIE, Choice.ALL_BAD):
        raise ValidationError({"verdict": "A verdict is either 'tie' or 'all_bad'."})
    if round.root_id is None:
        raise ValidationError({"round": "This round is not a conversation yet: continue it, then vote on the whole."})
    if round.status not in VOTABLE_ROUNDS:
        raise ValidationError({"round": "This turn is still running; vote when its answers are in."})
    output = None
    if output_id is not None:
        output = Output.objects.filter(pk=output_id, round=round).first()
        if output is None:
            raise ValidationError({"output": "That answer is not part of this turn."})
        if output.status != OutputStatus.OK:
            raise ValidationError({"output": "Only a column whose conversation went on to this turn can win."})
    vote, _ = ConversationVote.objects.update_or_create(
        root_id=round.root_id,
        user=user,
        defaults={
            "turn": round,
            "group_id": round.group_id,
            "choice": Choice.WINNER if output else Choice(verdict),
            "output": output,
            "variant_id": output.variant_id if output else None,
        },
    )
    # The report shows the conversation votes: it recomputes, as after any vote (robust: a cache that is down is
    # logged, the vote is kept).
    transaction.on_commit(lambda: votes_changed(round), robust=True)
    return vote
