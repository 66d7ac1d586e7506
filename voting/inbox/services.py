"""Writes for the inbox: serve a person their next round, skip a round, undo the last vote or skip."""

from __future__ import annotations

from django.db import transaction
from django.utils import timezone

from compare.models import Round
from lab.models import Workspace
from voting.models import InboxServe, InboxSkip
from voting.services import vote_withdraw

from .rule import choose
from .selectors import InboxFilters, inbox_candidates


@transaction.atomic
def inbox_serve(*, workspace: Workspace, user, filters: InboxFilters, blind: bool = True) -> Round | None:
    """The round `user` should vote on next (voting.inbox.rule), recorded as served to them now; None when none is
    left. Serving is one at a time per workspace (a row lock on the workspace), so two people asking at once see
    each other's serve and get different rounds while there are two to give."""
    Workspace.objects.select_for_update(no_key=True).filter(pk=workspace.pk).exists()
    now = timezone.now()
    chosen = choose(inbox_candidates(workspace, user, filters, now))
    if chosen is None:
        return None
    _record_serve(chosen.round_id, user, now, blind)
    return Round.objects.select_related("group").get(pk=chosen.round_id)


@transaction.atomic
def inbox_skip(*, round: Round, user) -> InboxSkip:
    """Remember that `user` skipped `round`: the inbox never serves it to them again, unless they undo it."""
    skip, _ = InboxSkip.objects.get_or_create(round=round, user=user)
    return skip


@transaction.atomic
def inbox_undo(*, round: Round, user, blind: bool = True) -> str | None:
    """Take back `user`'s vote on, or skip of, `round` and serve it to them again: "vote", "skip" or None."""
    undone = "vote" if vote_withdraw(round=round, user=user) else None
    if undone is None and InboxSkip.objects.filter(round=round, user=user).delete()[0]:
        undone = "skip"
    _record_serve(round.pk, user, timezone.now(), blind)
    return undone


def _record_serve(round_id: int, user, now, blind: bool) -> None:
    InboxServe.objects.bulk_create(
        [InboxServe(round_id=round_id, user=user, served_at=now, blind=blind)],
        update_conflicts=True,
        unique_fields=["round", "user"],
        update_fields=["served_at", "blind"],
    )
