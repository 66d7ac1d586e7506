"""The response cache: a round that opts in reuses the stored answer to an identical call instead of making it.

Opt-in per round (`Round.use_cache`), set from an experiment's `cache: true` or a run's `cache` field. The key
is a SHA-256 of the call's canonical JSON: connection kind, base URL, model, parameters, messages and the round's
seed; entries belong to one workspace and are never read from another. Only complete answers are stored: an
error, a timeout, a cancelled answer or one cut off at the token limit never is.

A hit makes no request and costs nothing: its output is `ok`, `cached`, cost 0, no timings (no call was
timed), and keeps the stored token counts for reference; spend sums cost, so they are not counted. The hit
path is one statement for all the calls of the rounds claimed together, at the claim (an UPDATE joining their keys
to the entries); the answers a round does fetch are stored in one INSERT when its calls are done.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime, timedelta

from django.conf import settings
from django.db import connection
from django.utils import timezone

from lab.engine.fanout import Call
from lab.markdown import render_markdown

from .models import CachedAnswer, Output, OutputStatus, Round

# Stopped by the provider's filter: the text may be partial (OpenAI) or a refusal, neither worth replaying.
FILTERED = "content_filter"
# What an entry keeps of an answer.
STORED_FIELDS = ["text", "html", "finish_reason", "input_tokens", "output_tokens", "tokens_estimated"]


def call_key(call: Call, *, seed: int | None) -> str:
    """The cache key of one call: what the provider is asked, exactly, and by which endpoint."""
    canonical = json.dumps(
        {
            "kind": call.config.kind,
            "base_url": call.config.base_url.rstrip("/"),
            "model": call.request.model,
            "params": call.request.params,
            "messages": call.request.messages,
            "seed": seed,
            # Only when set, so the keys of calls without tools or a schema stay what they were.
            **({"tools": call.request.tools, "tool_choice": call.request.tool_choice} if call.request.tools else {}),
            **({"response_schema": call.request.response_schema} if call.request.response_schema else {}),
        },
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


def is_cacheable(output: Output) -> bool:
    """Only a complete answer is kept: never an error, a timeout, a cancelled, a cut-off or a filtered one."""
    # An answer that called tools is not kept: the cache stores text only.
    ok = output.status == OutputStatus.OK and not output.tool_calls
    return ok and not output.is_cut_off and output.finish_reason != FILTERED


def rounds_cache_take(*, calls: dict[Round, list[Call]]) -> dict[int, tuple[list[Call], dict[int, str]]]:
    """Answer from the cache the calls of claimed rounds that it holds, for each round id: the calls still to make
    and, for each of them, the key its answer is stored under (output id → key). A round without the cache keeps
    its calls, with no keys.

    Runs inside the claim's transaction, one statement per workspace for all the rounds of a claim (one per round
    was most of a re-run's database time). No `output.done` is sent for a hit: `round.done` follows at once (the
    round has nothing to wait for), and the page reloads the round over HTTP then.
    """
    keys: dict[Round, dict[int, str]] = {
        round_: {call.key: call_key(call, seed=round_.seed) for call in round_calls}
        for round_, round_calls in calls.items()
        if round_.use_cache and round_calls
    }
    by_workspace: dict[int, dict[int, str]] = {}
    for round_, round_keys in keys.items():
        by_workspace.setdefault(round_.group.workspace_id, {}).update(round_keys)
    taken = set()
    for workspace_id, workspace_keys in by_workspace.items():
        taken |= _record_hits(workspace_id=workspace_id, keys=workspace_keys)
    return {
        round_.pk: (
            [call for call in round_calls if call.key not in taken],
            {pk: key for pk, key in keys.get(round_, {}).items() if pk not in taken},
        )
        for round_, round_calls in calls.items()
    }


def _record_hits(*, workspace_id: int, keys: dict[int, str]) -> set[int]:
    """Copy each stored answer onto its output in one statement (lookup and write at once, so the texts never
    pass through Python); returns the ids of the outputs answered. Postgres and SQLite both read it."""
    output, entry = Output._meta.db_table, CachedAnswer._meta.db_table
    rows = ", ".join(["(%s, %s)"] * len(keys))
    sql = f"""
        UPDATE {output} SET status = %s, cached = TRUE, error = '', text = c.text, html = c.html,
            finish_reason = c.finish_reason, input_tokens = c.input_tokens, output_tokens = c.output_tokens,
            tokens_estimated = c.tokens_estimated, cost = 0, queued_ms = NULL, ttft_ms = NULL,
            latency_ms = NULL,
            started_at = %s, finished_at = %s
        FROM (VALUES {rows}) AS k JOIN {entry} AS c ON c.key = k.column2
        WHERE {output}.id = k.column1 AND c.workspace_id = %s AND c.created_at >= %s
        RETURNING {output}.id
    """  # noqa: S608 (table names from the models; every value is a parameter)
    now = timezone.now()
    stamp, oldest = (connection.ops.adapt_datetimefield_value(t) for t in (now, _oldest_fresh(now)))
    params = [OutputStatus.OK, stamp, stamp, *(value for pair in keys.items() for value in pair), workspace_id, oldest]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return {row[0] for row in cursor.fetchall()}


def _oldest_fresh(now: datetime) -> datetime:
    """The oldest entry still reused: RESPONSE_CACHE_MAX_AGE_DAYS back (any age when it is 0)."""
    if settings.RESPONSE_CACHE_MAX_AGE_DAYS <= 0:
        return datetime(1970, 1, 1, tzinfo=UTC)
    return now - timedelta(days=settings.RESPONSE_CACHE_MAX_AGE_DAYS)


def round_cache_store(*, workspace_id: int, keys: dict[int, str]) -> int:
    """Store the complete answers among a round's outputs under their keys (one SELECT, one INSERT), replacing
    an entry under the same key (expired, or just stored by a concurrent round); returns how many were stored."""
    if not keys:
        return 0
    outputs = Output.objects.filter(pk__in=keys, status=OutputStatus.OK, cached=False).only("status", *STORED_FIELDS)
    entries = {}
    for output in outputs:
        if is_cacheable(output):
            entries[keys[output.pk]] = CachedAnswer(
                workspace_id=workspace_id,
                key=keys[output.pk],
                text=output.text,
                html=output.html or (render_markdown(output.text) if output.text else ""),
                finish_reason=output.finish_reason,
                input_tokens=output.input_tokens,
                output_tokens=output.output_tokens,
                tokens_estimated=output.tokens_estimated,
            )
    CachedAnswer.objects.bulk_create(
        entries.values(),
        update_conflicts=True,
        unique_fields=["workspace", "key"],
        update_fields=[*STORED_FIELDS, "created_at"],
    )
    return len(entries)


def cache_prune() -> int:
    """Delete entries older than RESPONSE_CACHE_MAX_AGE_DAYS (none when it is 0); returns how many."""
    if settings.RESPONSE_CACHE_MAX_AGE_DAYS <= 0:
        return 0
    return CachedAnswer.objects.filter(created_at__lt=_oldest_fresh(timezone.now())).delete()[0]
