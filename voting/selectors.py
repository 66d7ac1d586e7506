"""Reads for votes: a round's tally and a user's own vote, and what the voting pages' filters offer."""

from django.db.models import Count

from compare.models import ROUND_UNFINISHED, CompareGroup, Round, Variant
from lab.models import Membership, Workspace

from .models import Choice, ConversationVote, Vote

GROUP_CHOICES = 200  # the newest comparisons offered in a filter


def round_tally(round: Round) -> dict:
    """Counts per answer (by output id) plus ties and all-bad: small enough to push on every vote."""
    rows = Vote.objects.filter(round=round).values("choice", "output_id").annotate(n=Count("id"))
    outputs = {str(r["output_id"]): r["n"] for r in rows if r["choice"] == Choice.WINNER}
    by_choice = {r["choice"]: r["n"] for r in rows if r["choice"] != Choice.WINNER}
    return {
        "outputs": outputs,
        "tie": by_choice.get(Choice.TIE, 0),
        "all_bad": by_choice.get(Choice.ALL_BAD, 0),
        "total": sum(r["n"] for r in rows),
    }


def vote_of(round: Round, user) -> Vote | None:
    if not getattr(user, "is_authenticated", False):
        return None
    return Vote.objects.filter(round=round, user=user).first()


def has_voted(round: Round, user) -> bool:
    """Blind mode's reveal rule: a person sees names once they have voted on that round. In a conversation a column
    keeps its letter in every turn, so one turn's names would name them all: there names show once the person has
    voted on the whole conversation (as the Arena's vote ends its battle; docs/conversations.md)."""
    if not getattr(user, "is_authenticated", False):
        return False
    if round.root_id is not None or Round.objects.filter(root_id=round.pk).exists():
        return ConversationVote.objects.filter(root_id=round.conversation_id, user=user).exists()
    return Vote.objects.filter(round=round, user=user).exists()


def everyone_voted(group: CompareGroup) -> bool:
    """Blind mode's end for a whole comparison: every member of its workspace (everyone who may vote) has voted on
    every round that can be voted on, and there is at least one."""
    rounds = Round.objects.filter(group=group).exclude(status__in=ROUND_UNFINISHED)
    members = Membership.objects.filter(workspace_id=group.workspace_id)
    wanted = rounds.count() * members.count()
    # One vote per person per round (vote_one_per_user), so the count is complete exactly when it is the product.
    return wanted > 0 and Vote.objects.filter(round__in=rounds, user__in=members.values("user")).count() == wanted


def filter_choices(workspace: Workspace) -> dict:
    """What the inbox's and the leaderboard's filters offer: the newest comparisons (id, title), the members'
    usernames, and the model ids of the workspace's variants (querysets, read only when a page shows them)."""
    return {
        "groups": CompareGroup.objects.filter(workspace=workspace)
        .order_by("-created_at")
        .values_list("pk", "title")[:GROUP_CHOICES],
        "authors": Membership.objects.filter(workspace=workspace)
        .order_by("user__username")
        .values_list("user__username", flat=True),
        "models": Variant.objects.filter(group__workspace=workspace)
        .order_by("model")
        .values_list("model", flat=True)
        .distinct(),
    }
