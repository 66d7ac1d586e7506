"""Writes for voter quality: an owner excludes a voter from a workspace's statistics, or counts them again."""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction

from lab import values
from lab.models import Membership, Workspace
from voting.models import VoterExclusion
from voting.reports.cache import voters_changed

MAX_REASON = 300  # VoterExclusion.reason's length


@transaction.atomic
def voter_exclude(*, workspace: Workspace, user_id: int, reason: str, by) -> VoterExclusion:
    """Leave `user_id`'s votes out of every report and leaderboard of the workspace (a second call updates the
    reason). The caller checks that `by` is an owner. The reports' cache is told once it commits (robust: a cache
    that is down does not undo or fail the change, as for a vote)."""
    reason = reason.strip()
    if not reason:
        raise ValidationError({"reason": "Say why this voter is left out: every report prints it."})
    if len(reason) > MAX_REASON:
        raise ValidationError({"reason": f"Keep the reason to at most {MAX_REASON} characters."})
    if problem := values.text_problem(reason):
        raise ValidationError({"reason": problem})
    if not Membership.objects.filter(workspace=workspace, user_id=user_id).exists():
        raise ValidationError({"user": "No such member of this workspace."})
    exclusion, _ = VoterExclusion.objects.update_or_create(
        workspace=workspace, user_id=user_id, defaults={"reason": reason, "excluded_by": by}
    )
    transaction.on_commit(lambda: voters_changed(workspace.pk), robust=True)
    return exclusion


@transaction.atomic
def voter_readmit(*, workspace: Workspace, user_id: int) -> bool:
    """Count `user_id`'s votes again; False when they were not excluded."""
    deleted, _ = VoterExclusion.objects.filter(workspace=workspace, user_id=user_id).delete()
    if deleted:
        transaction.on_commit(lambda: voters_changed(workspace.pk), robust=True)
    return bool(deleted)
