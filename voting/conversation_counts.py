"""Reads of conversation votes and how reports count turns, written once: every report page, the report and
leaderboard APIs and the vote panel ask here (the votes themselves are cast in voting.conversation_votes)."""

from __future__ import annotations

from django.db.models import Count

from compare.models import CompareGroup, Round

from .models import Choice, ConversationVote

# How the reports say they count turns, written once for every report page, the leaderboard and the API.
TURN_COUNTING = (
    "Each turn of a conversation is a round: its vote counts as one comparison. Votes on whole conversations are "
    "shown separately and are not counted in these figures."
)


def conversation_vote_of(round: Round, user) -> ConversationVote | None:  # noqa: A002
    """The user's vote on the conversation this turn belongs to, or None."""
    return ConversationVote.objects.filter(root_id=round.conversation_id, user=user).first()


def group_conversation_votes(group: CompareGroup) -> dict:
    """A comparison's conversation votes, counted once each: per winning variant id, ties, all bad and the total."""
    counts = {"variants": {}, "tie": 0, "all_bad": 0, "total": 0}
    rows = ConversationVote.objects.filter(group=group).values("choice", "variant_id").annotate(n=Count("pk"))
    for row in rows:
        counts["total"] += row["n"]
        if row["choice"] == Choice.WINNER:
            counts["variants"][row["variant_id"]] = row["n"]
        else:
            counts[row["choice"]] += row["n"]
    return counts


def group_turns(group: CompareGroup) -> dict:
    """What a report says about conversations: how it counts turns, and the conversation votes it leaves out of its
    figures (winners by variant id, most first)."""
    counts = group_conversation_votes(group)
    winners = sorted(counts["variants"].items(), key=lambda item: -item[1])
    votes = {key: counts[key] for key in ("total", "tie", "all_bad")}
    return {
        "counting": TURN_COUNTING,
        "conversation_votes": {**votes, "winners": [{"variant": pk, "votes": n} for pk, n in winners]},
    }
