"""Reads for the inbox: the comparisons it draws from, the rounds still open to a person, and who has what open."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db.models import Count, Exists, OuterRef, QuerySet

from compare.blind import input_as_seen, outputs_as_seen_by, tally_as_seen
from compare.models import CompareGroup, Round, RoundStatus
from compare.selectors import round_with_outputs
from lab.models import Workspace
from voting.models import InboxServe, InboxSkip, Vote
from voting.reports.cache import cached_by_group_votes
from voting.reports.comparison import group_round_votes, group_variants
from voting.selectors import round_tally

from .conversation import conversation_as_seen
from .rule import RULE_SENTENCE, Candidate, Need, comparison_need

# How long a served round stays "open" for its person; after that the inbox may serve it to others first again.
HOLD = timedelta(minutes=10)
MAX_CHOICES = 5  # keys 1–5 pick an answer: comparisons with more variants are voted on their own page


@dataclass(frozen=True)
class InboxFilters:
    """Only comparisons with this id, created by this username, or with a variant on this model id."""

    group: int | None = None
    author: str | None = None
    model: str | None = None


def inbox_groups(workspace: Workspace, filters: InboxFilters) -> QuerySet[CompareGroup]:
    groups = CompareGroup.objects.filter(workspace=workspace)
    if filters.group:
        groups = groups.filter(pk=filters.group)
    if filters.author:
        groups = groups.filter(created_by__username=filters.author)
    if filters.model:
        groups = groups.filter(pk__in=CompareGroup.objects.filter(variants__model=filters.model).values("pk"))
    groups = groups.annotate(variant_count=Count("variants"))
    return groups.filter(variant_count__gte=2, variant_count__lte=MAX_CHOICES)


def open_rounds(user, groups: QuerySet[CompareGroup]) -> QuerySet[Round]:
    """Finished rounds of `groups` that `user` has neither voted on nor skipped, with their vote counts."""
    voted = Vote.objects.filter(round=OuterRef("pk"), user=user)
    skipped = InboxSkip.objects.filter(round=OuterRef("pk"), user=user)
    return (
        Round.objects.filter(group__in=groups.values("pk"), status=RoundStatus.DONE)
        .exclude(Exists(voted))
        .exclude(Exists(skipped))
        .annotate(vote_count=Count("votes"))
    )


def held_by_others(workspace: Workspace, user, now: datetime) -> set[int]:
    """Rounds that someone else has open in their inbox now: their latest serve, recent, not yet voted or skipped."""
    recent = (
        InboxServe.objects.filter(round__group__workspace=workspace, served_at__gte=now - HOLD)
        .exclude(user=user)
        .order_by("user_id", "-served_at")
        .values_list("user_id", "round_id")
    )
    latest: dict[int, int] = {}
    for other, round_id in recent:
        latest.setdefault(other, round_id)
    done = set(
        Vote.objects.filter(round_id__in=latest.values(), user_id__in=latest).values_list("user_id", "round_id")
    ) | set(
        InboxSkip.objects.filter(round_id__in=latest.values(), user_id__in=latest).values_list("user_id", "round_id")
    )
    return {round_id for other, round_id in latest.items() if (other, round_id) not in done}


def group_need(group: CompareGroup) -> Need:
    """The comparison's need from its report, cached under its votes' version: the inbox reads it for every
    comparison with an open round, on every serve."""

    def compute() -> Need:
        variants = group_variants(group)
        return comparison_need([row.key for row in variants], group_round_votes(group, variants))

    return cached_by_group_votes(group.pk, "inbox-need", compute)


def inbox_candidates(workspace: Workspace, user, filters: InboxFilters, now: datetime) -> list[Candidate]:
    """Every round the inbox may serve `user`, with what the choice rule weighs."""
    groups = inbox_groups(workspace, filters)
    rounds = list(open_rounds(user, groups).values_list("pk", "group_id", "vote_count"))
    needs = {group.pk: group_need(group) for group in groups.filter(pk__in={g for _, g, _ in rounds})}
    held = held_by_others(workspace, user, now)
    return [
        Candidate(round_id=pk, group_id=group_id, need=needs[group_id], votes=votes, held_by_others=pk in held)
        for pk, group_id, votes in rounds
    ]


def inbox_remaining(workspace: Workspace, user, filters: InboxFilters) -> int:
    return open_rounds(user, inbox_groups(workspace, filters)).count()


def inbox_view(round_: Round | None, user, *, workspace: Workspace, filters: InboxFilters, blind: bool) -> dict:
    """What the inbox shows: the round's answers as this person may see them (blind mode's shuffle and reveal, as on
    the comparison page), what they were asked (blind mode's shared input), its tally (only the total while names
    are hidden), the conversation so far on a later turn, and what is left."""
    view = {"blind": blind, "remaining": inbox_remaining(workspace, user, filters), "rule": RULE_SENTENCE}
    if round_ is None:
        return {
            **view,
            "round": None,
            "group": None,
            "outputs": [],
            "labels_visible": False,
            "tally": None,
            "input": None,
            "conversation": None,
        }
    round_ = round_with_outputs(round_)
    outputs, visible = outputs_as_seen_by(round_, user, blind=blind)
    tally = round_tally(round_)
    return {
        **view,
        "round": round_,
        "group": round_.group,
        "outputs": outputs,
        "labels_visible": visible,
        "input": input_as_seen(round_, outputs),
        "tally": tally_as_seen(tally, labels_visible=visible),
        # A later turn: what was said before, each column's own earlier answers in its column (blind-safe).
        "conversation": conversation_as_seen(round_, outputs, user),
    }
