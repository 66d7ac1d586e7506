"""Reports and leaderboards served from Django's cache, under versions that every new vote replaces.

Each comparison and each workspace has a version token in the cache; a result is stored under the token read
before computing it. A vote replaces both tokens once it commits (`votes_changed`), so the next request misses and
recomputes, and a result computed while that vote was committing lands under the old token, where nobody looks.
A token that the cache evicted is simply re-created: a miss, never a stale hit. While the cache is down (Redis
away), every request computes its result: slower, never a 500. Judge verdicts and experiment
evaluations enter the report's key through `judge_scores_stamp` (aggregate queries), since both are written
without signals.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import uuid
from collections.abc import Callable

from django.core.cache import cache

from compare.models import CompareGroup, Round
from lab.models import Workspace
from lab.outages import REDIS_DOWN

from .comparison import group_report
from .judge_scores import judge_scores_stamp
from .leaderboard import LeaderboardFilters, leaderboard

RESULT_TIMEOUT_S = 24 * 3600  # versions make entries correct; the timeout only bounds what the cache keeps


def _version_key(scope: str, pk: int) -> str:
    return f"voting:version:{scope}:{pk}"


def _version(scope: str, pk: int) -> str | None:
    """The scope's token; None while the cache is down (Redis away), when nothing is cached."""
    key = _version_key(scope, pk)
    try:
        version = cache.get(key)
        if version is None:
            cache.add(key, uuid.uuid4().hex, timeout=None)  # add: concurrent first readers agree on one token
            version = cache.get(key)
    except REDIS_DOWN:
        return None
    return version


def cached_by_group_votes(group_id: int, name: str, compute: Callable[[], object]):
    """`compute()` cached under the comparison's votes version (a vote or an exclusion replaces it)."""
    version = _version("group", group_id)
    return _cached(version, f"voting:{name}:{group_id}:{version}", compute)


def votes_changed(round_: Round) -> None:
    """Called once a vote on `round_` commits: its comparison's report and its workspace's leaderboards recompute."""
    group = round_.group
    cache.set_many(
        {
            _version_key("group", group.pk): uuid.uuid4().hex,
            _version_key("workspace", group.workspace_id): uuid.uuid4().hex,
        },
        timeout=None,
    )


def voters_changed(workspace_id: int) -> None:
    """Called once an owner excludes or readmits a voter: every report and leaderboard of the workspace recomputes."""
    groups = CompareGroup.objects.filter(workspace_id=workspace_id).values_list("pk", flat=True)
    tokens = {_version_key("group", pk): uuid.uuid4().hex for pk in groups}
    cache.set_many({**tokens, _version_key("workspace", workspace_id): uuid.uuid4().hex}, timeout=None)


def _cached(version: str | None, key: str, compute: Callable[[], dict]) -> dict:
    if version is None:  # the cache is down: computed for this request, slower but never stale
        return compute()
    try:
        result = cache.get(key)
    except REDIS_DOWN:
        return compute()
    if result is None:
        result = compute()
        with contextlib.suppress(*REDIS_DOWN):
            cache.set(key, result, timeout=RESULT_TIMEOUT_S)
    return result


def _digest(*parts) -> str:
    """Parts of a key (free text such as an author's name, timestamps) as characters every cache backend accepts."""
    return hashlib.sha256(json.dumps(parts, default=str).encode()).hexdigest()[:32]


def cached_group_report(group: CompareGroup, *, pass_threshold: float) -> dict:
    # updated_at: a renamed comparison (or, in a test database, another one under a reused id) is not this one.
    version = _version("group", group.pk)
    state = _digest(version, group.updated_at, judge_scores_stamp(group), pass_threshold)
    return _cached(
        version, f"voting:report:{group.pk}:{state}", lambda: group_report(group, pass_threshold=pass_threshold)
    )


def cached_leaderboard(workspace: Workspace, *, by: str, filters: LeaderboardFilters) -> dict:
    version = _version("workspace", workspace.pk)
    state = _digest(version, workspace.created_at, by, filters.as_dict())
    return _cached(
        version, f"voting:leaderboard:{workspace.pk}:{state}", lambda: leaderboard(workspace, by=by, filters=filters)
    )
