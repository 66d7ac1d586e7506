"""The worker's side of a round: claim it, record each answer, finish it, or fail it readably.

A round is claimed with a conditional UPDATE, so a redelivered message finds it taken and does nothing. The
worker writes little: the claim (round and outputs at once), one row per answer as it finishes, and the finish
with the answers not yet written (a batch round's all, an interactive round's last). Whatever a dead worker leaves
behind, lab.jobs takes back for a live worker, or fails with a readable error once the round's deadline has passed.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import timedelta
from functools import cache, partial

from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import BooleanField, Count, ExpressionWrapper, OuterRef, Q, QuerySet, Subquery
from django.utils import timezone

from lab.catalog import split_model_id
from lab.crypto import SecretDecryptionError
from lab.engine.fanout import Call, Result, Spending
from lab.engine.queue_deadlines import queue_deadline_s
from lab.events import (
    OUTPUT_DONE,
    PROGRESS,
    ROUND_DONE,
    ROUND_STARTED,
    OutputDone,
    output_done,
    progress,
    round_done,
    round_started,
)
from lab.files.inline import with_image_data
from lab.jobs.kinds import Lane
from lab.jobs.workers import claimant
from lab.markdown import render_markdown
from lab.models import Connection, Workspace
from lab.providers.answer import stored_cost
from lab.providers.base import ChatRequest, ConnectionConfig, ModelInfo
from lab.providers.message_rules import Target, context_problem
from lab.providers.params import set_params
from lab.providers.tools import checked_calls, schema_valid, sent_schema
from lab.realtime import broadcast, group_channel, listened
from lab.templating import render_variants
from lab.update_rows import update_rows

from .. import response_cache
from ..assertions.services import with_assertions
from ..blind import blind_now, for_channel
from ..catalog import message_target, resolve_model
from ..experiments.budget import rounds_spending
from ..hooks import round_finished
from ..models import (
    ROUND_TRANSITIONS,
    ROUND_UNFINISHED,
    CompareGroup,
    Output,
    OutputStatus,
    Round,
    RoundStatus,
    Variant,
)

logger = logging.getLogger(__name__)

WORKER_STOPPED = "The worker stopped before this answer finished."
ROUND_WORKER_STOPPED = "The worker stopped before this round finished; it was failed when its deadline passed."


# An answer's tools and response schema (the variant's own or its group's), which its tool calls and its JSON are
# checked against when it is stored.
AnswerCheck = tuple[list[dict], dict | None]


@dataclass(frozen=True)
class ClaimedRound:
    round_id: int
    group_id: int
    calls: list[Call]
    run_s: float  # how long it may take: its lane's queue deadline plus its slowest answer's stagger and timeout
    answer_s: float = 0.0  # of which its slowest answer's stagger and timeout (once sent, a call takes no longer)
    lane: str = Lane.INTERACTIVE
    workspace_id: int = 0
    # Opt-in response cache: output id → the key its answer is stored under once the round's calls are done.
    cache_keys: dict[int, str] = field(default_factory=dict)
    # Whether a page listened when it was claimed (always true of an interactive round): a batch round nobody
    # watched streams nothing and sends no events (a page that opens later reloads it over HTTP).
    watched: bool = True
    blind: bool = False  # its pushes carry nothing blind mode hides (compare.blind.for_channel)
    # What its answers are checked against once they finish (`_answer_checks`), read with the claim so that storing
    # an answer costs no query for its variant's tool settings.
    checks: dict[int, AnswerCheck] = field(default_factory=dict)


def round_claim(*, round_id: int) -> ClaimedRound | None:
    """Take a queued round for this worker and prepare its calls; None when it is not queued (any more)."""
    claimed = rounds_claim(round_ids=[round_id])
    return claimed[0] if claimed else None


@transaction.atomic
def rounds_claim(*, round_ids: list[int]) -> list[ClaimedRound]:
    """Take those of these rounds that are queued, with one conditional UPDATE for all of them, and prepare their
    calls; in the order given, without the rounds that were not queued (any more). Claiming many at once is how
    the experiment command keeps a few queries per claim instead of a few per round."""
    now = timezone.now()
    taken, longest = _take_queued(round_ids, now)
    if not taken:
        return []
    outputs = _unanswered_outputs(taken)
    resolvers = _resolvers(taken, outputs)
    # A batch round nobody watches (an experiment's page shows progress, not tokens) asks each answer in one
    # request, without streaming, and sends no events; an interactive round, or a batch round a page follows,
    # streams. Asked once per comparison.
    watched = cache(lambda group_id: listened(group_channel(group_id)))
    heard = {r.pk: r.lane != Lane.BATCH or watched(r.group_id) for r in taken}
    spending = rounds_spending(taken)  # a budgeted experiment's calls reserve their worst case before they go
    calls = {
        r.pk: _prepare_calls(
            r, outputs[r.pk], resolvers[r.group.workspace_id], now, stream=heard[r.pk], spending=spending.get(r.pk)
        )
        for r in taken
    }
    every_output = [o for round_outputs in outputs.values() for o in round_outputs]
    _outputs_set(
        every_output, ["status", "rendered_system_prompt", "rendered_prompt", "messages", "error", "finished_at"]
    )
    # Opt-in response cache: answers stored for identical calls are recorded now, in one statement for the claim,
    # and those calls are not made (compare/response_cache.py).
    uncached = response_cache.rounds_cache_take(calls={r: calls[r.pk] for r in taken})
    claimed = []
    for round_ in taken:
        if heard[round_.pk]:
            transaction.on_commit(
                partial(
                    broadcast,
                    group_channel(round_.group_id),
                    ROUND_STARTED,
                    **round_started(round=round_.pk, number=round_.number, outputs=[o.pk for o in outputs[round_.pk]]),
                )
            )
        round_calls, cache_keys = uncached[round_.pk]
        claimed.append(
            ClaimedRound(
                round_id=round_.pk,
                group_id=round_.group_id,
                calls=round_calls,
                run_s=longest[round_.pk].total_seconds(),
                answer_s=longest[round_.pk].total_seconds() - queue_deadline_s(round_.lane),
                workspace_id=round_.group.workspace_id,
                cache_keys=cache_keys,
                lane=round_.lane,
                watched=heard[round_.pk],
                blind=blind_now(round_.group),
                checks=_answer_checks(outputs[round_.pk]),
            )
        )
    return claimed


def _take_queued(round_ids: list[int], now) -> tuple[list[Round], dict[int, timedelta]]:
    """Move the queued ones of these rounds to running (one UPDATE), each with its deadline; the rounds taken, in
    the order given, and how long each may run."""
    variants = Variant.objects.filter(group=OuterRef("group_id")).order_by().values("group")
    found = list(
        Round.objects.select_related("group__workspace")
        .annotate(variant_count=Subquery(variants.annotate(count=Count("pk")).values("count")))
        .filter(pk__in=round_ids, status=RoundStatus.QUEUED)
        .order_by()  # put in the order given below; the model's ordering would only cost compiling it
    )
    groups: dict[int, CompareGroup] = {}
    for round_ in found:  # one comparison, one object: its variants (`_unanswered_outputs`) refer to it
        round_.group = groups.setdefault(round_.group_id, round_.group)
    # Waiting for a connection's turn is not part of an answer's timeout, so a round may also wait its lane's
    # queue deadline before its slowest answer starts.
    longest = {r.pk: r.group.longest_run(r.variant_count) + timedelta(seconds=queue_deadline_s(r.lane)) for r in found}
    grace = timedelta(seconds=settings.JOBS_GRACE_S)
    worker = claimant()
    taken = set(
        update_rows(
            ["status", "started_at", "deadline", "claimed_by"],
            [[r.pk, RoundStatus.RUNNING, now, now + longest[r.pk] + grace, worker] for r in found],
            model=Round,
            only_status=ROUND_TRANSITIONS[RoundStatus.RUNNING],
        )
    )
    by_id = {r.pk: r for r in found}
    return [by_id[pk] for pk in round_ids if pk in taken], longest


# What a claim reads of an output still to answer: what preparing its call reads, and what `_outputs_set` writes
# back (a column it did not change keeps its value). Not the answer's columns, which it neither reads nor writes.
CLAIM_FIELDS = ["round", "variant", "status", "rendered_system_prompt", "rendered_prompt", "messages", "error"]
CLAIM_FIELDS += ["finished_at"]


def _unanswered_outputs(taken: list[Round]) -> dict[int, list[Output]]:
    """Each round's outputs still to answer, by position (answers already stored are never asked for again). Their
    variants are read once for the claim, each shared by its outputs of every round (an experiment's claim of 100
    rounds of 3 prompts: 3 variants decoded, not 300), with its comparison as its rounds have it."""
    by_id = {r.pk: r for r in taken}
    groups = {r.group_id: r.group for r in taken}
    variants = {v.pk: v for v in Variant.objects.filter(group__in=groups).order_by()}
    for variant in variants.values():
        variant.group = groups[variant.group_id]  # read for its tool settings: already loaded with the round
    outputs: dict[int, list[Output]] = {pk: [] for pk in by_id}
    unanswered = Output.objects.filter(round_id__in=by_id).exclude(status=OutputStatus.OK).only(*CLAIM_FIELDS)
    for output in unanswered.order_by("variant__position"):
        output.round = by_id[output.round_id]
        output.variant = variants[output.variant_id]
        outputs[output.round_id].append(output)
    return outputs


def _resolvers(taken: list[Round], outputs: dict[int, list[Output]]) -> dict[int, Callable]:
    """Per workspace, model id → (connection settings, catalog entry). Variants often share a model (every one of
    them, in a comparison of prompts): each is looked up once, and the connections of every round are read
    together, in one query."""
    names = {o.variant.model.partition("::")[0] for round_outputs in outputs.values() for o in round_outputs}
    workspaces = {r.group.workspace_id: r.group.workspace for r in taken}
    connections: dict[int, dict[str, Connection]] = {pk: {} for pk in workspaces}
    for found in Connection.objects.filter(workspace__in=workspaces, name__in=names):
        connections[found.workspace_id][found.name] = found
    return {pk: cache(partial(_resolved, workspace, connections[pk])) for pk, workspace in workspaces.items()}


def _prepare_calls(
    round_: Round, outputs: list[Output], resolve, now, *, stream: bool, spending: Spending | None = None
) -> list[Call]:
    """The round's calls, its prompts rendered; an answer that cannot be asked is failed with a readable error
    (its row is written with the claim's)."""
    group = round_.group
    if round_.parent_id is not None:
        return _prebuilt_calls(round_, outputs, resolve, now, stream=stream, spending=spending)
    templates = [output.variant.template(_target(group, output.variant, resolve)) for output in outputs]
    rendered = render_variants(
        system_prompt=group.system_prompt,
        variables=round_.variables,
        variants=templates,
        shared_messages=group.shared_messages,
    )
    calls = []
    images: dict[int, dict] = {}  # the round's image bytes, read once for all its variants
    for output, prompt in zip(outputs, rendered.variants, strict=True):
        output.rendered_system_prompt, output.rendered_prompt = prompt.system_prompt, prompt.prompt
        output.messages = prompt.messages
        calls.extend(
            _asked(group, output, now, prompt.errors, resolve, stream=stream, spending=spending, images=images)
        )
    return calls


def _prebuilt_calls(
    round_: Round, outputs: list[Output], resolve, now, *, stream: bool, spending: Spending | None
) -> list[Call]:
    """A later turn of a conversation (compare/rounds/continuing.py) sends each column's messages exactly as they
    were built from its own earlier turns: nothing is rendered again. A column that was not continued has no
    messages and keeps the reason it was written with. A conversation grown past its model's known context is
    refused here, before any request, naming the model."""
    calls = []
    images: dict[int, dict] = {}  # the round's image bytes, read once for all its columns
    for output in outputs:
        if not output.messages:
            continue
        target = _target(round_.group, output.variant, resolve)
        problem = context_problem(output.messages, target) if target else None
        errors = [f"Variant {output.variant.position} ({output.variant.label}): {problem}"] if problem else []
        calls.extend(
            _asked(round_.group, output, now, errors, resolve, stream=stream, spending=spending, images=images)
        )
    return calls


def _asked(
    group: CompareGroup,
    output: Output,
    now,
    errors: list[str],
    resolve,
    *,
    stream: bool,
    spending: Spending | None,
    images: dict[int, dict],
) -> list[Call]:
    """The one call of an answer whose messages are set, or none when it cannot be asked: then the output is failed
    with a readable error (its row is written with the claim's). `images` caches the round's image bytes."""
    try:
        if errors:
            raise ValidationError(errors)
        config, info = resolve(output.variant.model)
        messages = with_image_data(output.messages, workspace_id=group.workspace_id, cache=images)
        call = _call(group, output, output.variant, config, info, messages=messages, stream=stream, spending=spending)
    except ValidationError as exc:
        output.status, output.error, output.finished_at = OutputStatus.ERROR, " ".join(exc.messages), now
        return []
    except SecretDecryptionError:
        connection_name = split_model_id(output.variant.model)[0]
        output.status, output.finished_at = OutputStatus.ERROR, now
        output.error = (
            f"The key of connection {connection_name} cannot be decrypted with the configured keys; enter it again."
        )
        return []
    output.status = OutputStatus.RUNNING
    return [call]


def _target(group: CompareGroup, variant: Variant, resolve) -> Target | None:
    """The provider rules for the variant's model (alternation, prefill, context), so a conversation its provider
    would refuse fails here, before any request; None when the model cannot be resolved (the call names why)."""
    try:
        config, info = resolve(variant.model)
    except (ValidationError, SecretDecryptionError):
        return None
    return message_target(config.kind, variant.model, info, {**group.params, **variant.params})


def _resolved(
    workspace: Workspace, connections: dict[str, Connection], model_id: str
) -> tuple[ConnectionConfig, ModelInfo | None]:
    """The connection settings and catalog entry behind a model id; raises ValidationError when the model is gone,
    SecretDecryptionError when its connection's key cannot be read."""
    connection, info = resolve_model(workspace, model_id, connections=connections)
    return ConnectionConfig.from_connection(connection), info


def _call(
    group: CompareGroup,
    output: Output,
    variant: Variant,
    config: ConnectionConfig,
    info: ModelInfo | None,
    *,
    messages: list[dict] | None = None,
    stream: bool = True,
    spending: Spending | None = None,
) -> Call:
    """What the engine needs for one answer; `messages` are the ones to send (the images' bytes filled in) when
    they differ from the recorded ones."""
    tools, tool_choice, response_schema = variant.tool_settings()
    return Call(
        key=output.pk,
        config=config,
        request=ChatRequest(
            model=split_model_id(variant.model)[1],
            messages=output.messages if messages is None else messages,
            params=set_params({**group.params, **variant.params}),
            tools=tools or None,
            tool_choice=(tool_choice or None) if tools else None,
            response_schema=sent_schema(response_schema),
        ),
        model_info=info,
        start_after_s=group.start_after_s(variant.position),
        timeout_s=group.timeout_s(),
        lane=output.round.lane,
        queue_deadline_s=queue_deadline_s(output.round.lane),
        stream=stream,
        spending=spending,
    )


@transaction.atomic
def outputs_checkpoint(*, texts: dict[int, str]) -> None:
    """Save the partial text of answers still running (one UPDATE); finished rows are never touched."""
    texts_now = [[pk, text] for pk, text in texts.items()]
    update_rows(["text"], texts_now, model=Output, only_status=[OutputStatus.RUNNING])


def output_record(*, result: Result, checks: dict[int, AnswerCheck] | None = None) -> OutputDone | None:
    """Store one finished answer and return the `output.done` payload; None if the row was already final.

    A row the user cancelled stays cancelled but keeps whatever text arrived. `checks`: its claim's (ClaimedRound).
    """
    if not _answers_set([result], checks):
        return None
    return output_event(_event_rows(Output.objects.filter(pk=result.key)).get())


ANSWER_FIELDS = [
    "status",
    "error",
    "text",
    "html",
    "finish_reason",
    "queued_ms",
    "ttft_ms",
    "latency_ms",
    "input_tokens",
    "output_tokens",
    "tokens_estimated",
    "cost",
    "started_at",
    "finished_at",
    "tool_calls",
    "schema_valid",
]


def _answers_set(results: list[Result], checks: dict[int, AnswerCheck] | None) -> list[int]:
    """Write finished answers to rows not yet final; the ids written. A row the user cancelled stays cancelled
    and keeps its own error, unless the answer itself says it was cancelled (then the answer's). `checks`: the
    claim's (`_answer_checks`); None reads them (one query), for a caller that has no claim."""
    now = timezone.now()
    rows = []
    if checks is None:
        outputs = Output.objects.filter(pk__in=[result.key for result in results]).select_related("variant__group")
        checks = _answer_checks(outputs)
    for result in results:
        answer = result.answer
        html = render_markdown(answer.text) if answer.text else ""
        tools, response_schema = checks.get(result.key, ([], None))
        answered = answer.status == "ok"
        rows.append(
            [result.key, answer.status, answer.error, answer.text, html, answer.finish_reason, result.queued_ms]
            + [answer.ttft_ms]
            + [answer.latency_ms, answer.input_tokens, answer.output_tokens, answer.tokens_estimated]
            + [stored_cost(answer.cost), result.started_at, now]
            + [checked_calls(answer.tool_calls, tools)]
            + [schema_valid(answer.text, response_schema) if answered else None]
        )
    cancelled = OutputStatus.CANCELLED
    return update_rows(
        ANSWER_FIELDS,
        rows,
        model=Output,
        expressions={
            "status": f"CASE WHEN o.status = '{cancelled}' THEN o.status ELSE {{value}} END",
            "error": f"CASE WHEN o.status = '{cancelled}' AND v.status <> '{cancelled}' THEN o.error "
            "ELSE {value} END",
        },
        only_status=[OutputStatus.QUEUED, OutputStatus.RUNNING, cancelled],
    )


def _answer_checks(outputs: Iterable[Output]) -> dict[int, AnswerCheck]:
    """Output id → the tools and response schema its answer is checked against, for the answers whose variant
    (or group) has either; an answer without is checked against none (the outputs come with variant and group)."""
    checks = {}
    for output in outputs:
        tools, _, response_schema = output.variant.tool_settings()
        if tools or response_schema:
            checks[output.pk] = (tools, response_schema)
    return checks


def _outputs_set(outputs: list[Output], fields: list[str]) -> None:
    """`bulk_update` of these fields in one UPDATE (lab.update_rows), whose SQL costs a fraction of the CASE per
    field and row that bulk_update builds (most of a batch round's claim, measured)."""
    update_rows(fields, [[output.pk] + [getattr(output, name) for name in fields] for output in outputs], model=Output)


# What `output_event` reads of an answer, its round and its comparison: its rows are read without the prompts and
# messages they also hold (the rendered conversation, the group's own), which may be long.
EVENT_FIELDS = [
    *["status", "html", "text", "error", "finish_reason", "queued_ms", "ttft_ms", "latency_ms", "cached"],
    *["input_tokens", "output_tokens", "tokens_estimated", "cost", "round__group__blind", "round__group__revealed_at"],
]


def _event_rows(outputs: QuerySet[Output]) -> QuerySet[Output]:
    return outputs.select_related("round__group").only(*EVENT_FIELDS)


def output_event(output: Output) -> OutputDone:
    """The `output.done` payload of an answer (lab.events.output_done). A blind comparison's push carries no
    figures (compare.blind; the output comes with its round and group)."""
    payload = output_done(
        output=output.pk,
        round=output.round_id,
        status=output.status,
        html=output.html,
        length=len(output.text),
        error=output.error,
        finish_reason=output.finish_reason,
        queued_ms=output.queued_ms,
        ttft_ms=output.ttft_ms,
        latency_ms=output.latency_ms,
        input_tokens=output.input_tokens,
        output_tokens=output.output_tokens,
        tokens_estimated=output.tokens_estimated,
        cost=float(output.cost) if output.cost is not None else None,
        cached=output.cached,
    )
    return for_channel(payload, blind=blind_now(output.round.group))


@transaction.atomic
def round_finish(*, round_id: int) -> Round:
    """Mark a round done after its answers are recorded (a cancelled or failed round keeps its status)."""
    return _finish([round_id])[0]


@transaction.atomic
def round_complete(*, claimed: ClaimedRound, results: list[Result], events: bool) -> None:
    """A worker's round once its calls are done: store the answers not yet stored (a batch round's every answer,
    an interactive round's last), the response cache's entries for the answers it fetched, and the finish, in one
    transaction. With `events`, each stored answer's `output.done` goes out when it commits, before `round.done`."""
    written = _answers_set(results, claimed.checks)
    if events and written:
        channel = group_channel(claimed.group_id)
        for output in _event_rows(Output.objects.filter(pk__in=written)).order_by("pk"):
            transaction.on_commit(partial(broadcast, channel, OUTPUT_DONE, **output_event(output)))
    response_cache.round_cache_store(workspace_id=claimed.workspace_id, keys=claimed.cache_keys)
    _finish([claimed.round_id])


@transaction.atomic
def rounds_complete(
    *,
    results: list[Result],
    round_ids: list[int],
    events: bool,
    cache_keys: dict[int, dict[int, str]] | None = None,
    checks: dict[int, AnswerCheck] | None = None,
) -> list[OutputDone]:
    """Store the answers of these batch rounds (every one of their calls is done) and finish the rounds, in one
    transaction: their answers, the response cache's `round_cache_store` (`cache_keys`: workspace id → output id →
    key), then the finish. Returns the `output.done` payloads when `events` (the caller sends them: the experiment
    command's batches, from the loop). `checks`: their claims' (ClaimedRound.checks), or None to read them."""
    written = _answers_set(results, checks)
    for workspace_id, keys in (cache_keys or {}).items():
        response_cache.round_cache_store(workspace_id=workspace_id, keys=keys)
    _finish(round_ids)
    if not events or not written:
        return []
    written_outputs = _event_rows(Output.objects.filter(pk__in=written)).order_by("pk")
    return [output_event(output) for output in written_outputs]


def _finish(round_ids: list[int]) -> list[Round]:
    now = timezone.now()
    rows = [[pk, RoundStatus.DONE, now] for pk in round_ids]
    done = update_rows(["status", "finished_at"], rows, model=Round, only_status=ROUND_TRANSITIONS[RoundStatus.DONE])
    # Read with whether each has assertions, so the grading hook asks nothing of a round without any.
    has_assertions = ExpressionWrapper(with_assertions(), output_field=BooleanField())
    found = {r.pk: r for r in Round.objects.filter(pk__in=round_ids).annotate(graded=has_assertions).order_by()}
    if done:
        # Only a failed write leaves a row unfinished here; say so rather than leave it running.
        Output.objects.filter(round_id__in=done).unfinished().update(
            status=OutputStatus.ERROR, error="The answer could not be saved.", finished_at=now
        )
        round_finished.send(
            sender=Round,
            round_ids=sorted(done),
            lanes={pk: found[pk].lane for pk in done},
            graded=[pk for pk in sorted(done) if found[pk].graded],
        )
    finished = [found[pk] for pk in round_ids if pk in found]
    transaction.on_commit(partial(rounds_announce, finished))
    return finished


def round_deadline_shorten(*, round_id: int, answer_s: float) -> None:
    """Every call of the running round has been sent: none may wait for its connection any more, so the round's
    deadline becomes its answers' time from now plus the grace (the claim's also covered the lane's queue
    deadline, an hour for batch work, which is how long a dead worker's round showed `running`)."""
    deadline = timezone.now() + timedelta(seconds=answer_s + settings.JOBS_GRACE_S)
    Round.objects.filter(pk=round_id, status=RoundStatus.RUNNING, deadline__gt=deadline).update(deadline=deadline)


def round_answers_requeue(round_id: int) -> None:
    """A round taken back from a worker that is gone: the answers it was making are queued again for the next
    claim (answers already stored are kept, and never asked again)."""
    Output.objects.filter(round_id=round_id, status=OutputStatus.RUNNING).update(
        status=OutputStatus.QUEUED, text="", html=""
    )


@transaction.atomic
def round_fail(*, round_id: int, error: str, output_error: str | None = None) -> bool:
    """Fail an unfinished round and its unfinished outputs with a readable error; False if it had finished."""
    now = timezone.now()
    if not Round.objects.transition(round_id, RoundStatus.FAILED, finished_at=now, error=error):
        return False
    Output.objects.filter(round_id=round_id).unfinished().update(
        status=OutputStatus.ERROR, error=output_error or error, finished_at=now
    )
    round_ = Round.objects.get(pk=round_id)
    transaction.on_commit(partial(rounds_announce, [round_]))
    logger.warning("Round %s failed: %s", round_id, error)
    return True


def rounds_announce(finished: list[Round]) -> None:
    """`round.done` on each round's group channel, then its run's progress when the round is one of several; for
    batch rounds, only where a page listens (asked once per comparison: the counts are a query per run)."""
    watched = cache(lambda group_id: listened(group_channel(group_id)))
    runs = {}
    for round_ in finished:
        if round_.lane == Lane.BATCH and not watched(round_.group_id):
            continue
        channel = group_channel(round_.group_id)
        broadcast(channel, ROUND_DONE, **round_done(round=round_.pk, status=round_.status, error=round_.error))
        runs[round_.run_id] = channel
    for run_id, channel in runs.items():
        counts = Round.objects.filter(run_id=run_id).aggregate(
            total=Count("id"), finished=Count("id", filter=~Q(status__in=ROUND_UNFINISHED))
        )
        if counts["total"] > 1:
            broadcast(channel, PROGRESS, **progress(run=str(run_id), done=counts["finished"], total=counts["total"]))
