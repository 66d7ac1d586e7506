"""Which votes the statistics count: everyone's but those of voters an owner excluded from the workspace, and a
plain account of what was left out. Every read of votes for a report or leaderboard goes through `counted`."""

from __future__ import annotations

from collections import Counter

from django.db.models import QuerySet

from lab.stats.wording import count_of
from voting.models import Vote, VoterExclusion


def excluded_voters(workspace_id: int) -> QuerySet[VoterExclusion]:
    return VoterExclusion.objects.filter(workspace_id=workspace_id)


def excluded_voter_ids(workspace_id: int) -> list[int]:
    return list(excluded_voters(workspace_id).values_list("user_id", flat=True))


def counted(votes: QuerySet[Vote], workspace_id: int) -> QuerySet[Vote]:
    """`votes` without those of voters excluded from the workspace."""
    return votes.exclude(user__in=excluded_voters(workspace_id).values("user"))


def left_out(votes: QuerySet[Vote], workspace_id: int) -> dict:
    """How many of `votes` the statistics leave out, by whom and why, with the sentence a report prints."""
    exclusions = {
        row.user_id: row for row in excluded_voters(workspace_id).select_related("user").order_by("user__username")
    }
    per_voter = Counter(votes.filter(user__in=list(exclusions)).order_by().values_list("user_id", flat=True))
    voters = [
        {"voter": row.user.username, "votes": per_voter[user_id], "reason": row.reason}
        for user_id, row in exclusions.items()
        if per_voter[user_id]
    ]
    total = sum(entry["votes"] for entry in voters)
    return {"votes": total, "voters": voters, "sentence": left_out_sentence(total, voters)}


def left_out_sentence(total: int, voters: list[dict]) -> str:
    if not total:
        return "No votes were left out: every vote counts."
    parts = "; ".join(
        f"{entry['voter']}'s {count_of(entry['votes'], 'vote')} (excluded by an owner: {entry['reason']})"
        for entry in voters
    )
    return f"{count_of(total, 'vote')} left out of these figures: {parts}."
