"""Conversations: continuing a finished round with a follow-up message, every column its own conversation.

A later turn is a round with a `parent` (the turn it continues), a `turn` number and a `root` (the conversation's
first round). Each column's messages are built here, once, from its own earlier turn: what that turn sent, its own
answer as an assistant message, then the follow-up as a user message; never another column's answer. The worker
sends them unchanged. The follow-up is plain text, not a template: no variable is filled in it. A column whose
answer in the parent turn did not finish OK is not continued: its output is written already failed, saying why.
Continuing the same turn twice makes two siblings (a branch), each a conversation of its own from there.
"""

from __future__ import annotations

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from lab.jobs.enqueue import enqueue_on_commit
from lab.jobs.kinds import Lane

from ..blind import creation_order
from ..models import CompareGroup, Output, OutputStatus, Round, RoundStatus
from .jobs import ROUND

MAX_MESSAGE_CHARS = 100_000

# How a column's answer in the turn before ended, in the reason it was not continued.
_ENDED = {
    OutputStatus.ERROR: "failed",
    OutputStatus.TIMEOUT: "timed out",
    OutputStatus.CANCELLED: "was cancelled",
    OutputStatus.QUEUED: "never started",
    OutputStatus.RUNNING: "never finished",
}


class NotContinuable(ValidationError):
    """The round cannot be continued as it is (not finished, or no column to continue): a conflict with its state,
    which the API answers with 409 rather than 400."""


@transaction.atomic
def round_continue(
    *,
    round: Round,  # noqa: A002 (the services' keyword is `round`)
    user,
    message: str,
    tool_results: list[dict] | None = None,
) -> Round:
    """Queue the next turn of `round`'s conversation with the user's follow-up `message` and, for columns whose
    answer called tools, a result for each call (`tool_results`: [{"output", "tool_call_id", "content"}]; then
    `message` may be empty); the new round is enqueued once the transaction commits."""
    message = message or ""
    if not isinstance(message, str) or (not message.strip() and not tool_results):
        raise ValidationError({"message": "Write the follow-up message to send to every column."})
    if len(message) > MAX_MESSAGE_CHARS:
        raise ValidationError({"message": f"A follow-up is at most {MAX_MESSAGE_CHARS:,} characters."})
    group = round.group
    CompareGroup.objects.select_for_update().filter(pk=group.pk).first()  # one numbering at a time
    round.refresh_from_db(fields=["status"])
    if round.status != RoundStatus.DONE:
        raise NotContinuable(
            {"round": f"Round {round.number} is {round.get_status_display().lower()}: only a finished round goes on."}
        )
    previous = {output.variant_id: output for output in round.outputs.select_related("variant")}
    if not any(output.status == OutputStatus.OK for output in previous.values()):
        raise NotContinuable({"round": f"No answer of round {round.number} finished: there is nothing to continue."})
    results = _checked_results(list(previous.values()), tool_results or [])
    now = timezone.now()
    number = (group.rounds.aggregate(last=Max("number"))["last"] or 0) + 1
    turn = Round.objects.create(
        group=group,
        number=number,
        variables=round.variables,
        dataset_row=round.dataset_row,
        seed=round.seed,
        created_by=user,
        lane=Lane.INTERACTIVE,
        enqueued_at=now,
        parent=round,
        root_id=round.conversation_id,
        turn=round.turn + 1,
        message=message,
    )
    # A blind comparison draws a fresh creation order per turn, so output ids say nothing (compare.blind).
    variants = creation_order(group, list(group.variants.order_by("position")))
    Output.objects.bulk_create(
        _next_output(turn, variant, previous.get(variant.pk), message, now, results) for variant in variants
    )
    enqueue_on_commit(ROUND, turn.pk, queue=Lane.INTERACTIVE)
    return turn


def _checked_results(outputs: list[Output], tool_results: list[dict]) -> dict[int, dict[str, str]]:
    """The results by output and call id; a 400 naming the column and the call when a result names no call of
    this round, or when a finished column's calls are not all answered."""
    by_id = {output.pk: output for output in outputs}
    results: dict[int, dict[str, str]] = {}
    problems = []
    for index, result in enumerate(tool_results, start=1):
        output = by_id.get(result.get("output")) if isinstance(result, dict) else None
        if output is None:
            problems.append(f"Result {index}: output {result.get('output')!r} is not an answer of this round.")
            continue
        calls = {call["id"] for call in output.tool_calls}
        if result.get("tool_call_id") not in calls:
            problems.append(
                f"Result {index}: {_column(output)} made no call {result.get('tool_call_id')!r} in this turn."
            )
            continue
        results.setdefault(output.pk, {})[result["tool_call_id"]] = str(result.get("content") or "")
    for output in outputs:
        if output.status != OutputStatus.OK:
            continue
        for call in output.tool_calls:
            if call["id"] not in results.get(output.pk, {}):
                problems.append(f"{_column(output)}: call {call['id']} ({call['name']}) needs a result.")
    if problems:
        raise ValidationError({"tool_results": problems})
    return results


def _column(output: Output) -> str:
    return f"Variant {output.variant.position} ({output.variant.label})"


def _next_output(
    turn: Round, variant, before: Output | None, message: str, now, results: dict[int, dict[str, str]]
) -> Output:
    if before is None or before.status != OutputStatus.OK:
        ended = "was not asked" if before is None else _ENDED.get(before.status, "did not finish")
        return _not_continued(turn, variant, f"Not continued: its answer in turn {turn.turn - 1} {ended}.", now)
    answered = results.get(before.pk, {})
    if not message.strip() and not answered:
        return _not_continued(turn, variant, "Not continued: no follow-up and no tool call of its to answer.", now)
    return Output(
        round=turn,
        variant=variant,
        rendered_system_prompt=before.rendered_system_prompt,
        rendered_prompt=message,
        messages=continued_messages(
            before.messages, before.text, message, tool_calls=before.tool_calls, tool_results=answered
        ),
    )


def _not_continued(turn: Round, variant, error: str, now) -> Output:
    return Output(round=turn, variant=variant, status=OutputStatus.ERROR, error=error, finished_at=now)


def split_turns(messages: list[dict], turn: int) -> tuple[list[dict], list[dict]]:
    """A column's messages at `turn`, in two: the first turn's (system prompt, few-shot turns, its prompt) and
    those since, each later turn starting with the column's own answer (an assistant message, with its tool calls)
    followed by a result per call and the follow-up, either of which may be absent. The one place that knows how a
    conversation's messages are laid out: the comparison page and the judge read turns through it."""
    later = turn - 1
    starts = [index for index, message in enumerate(messages) if message.get("role") == "assistant"]
    if later <= 0 or len(starts) < later:
        return list(messages), []
    cut = starts[-later]
    return list(messages[:cut]), list(messages[cut:])


def later_turns(since: list[dict]) -> list[list[dict]]:
    """The messages since the first turn (`split_turns`), one list per later turn, each opening with the answer."""
    turns: list[list[dict]] = []
    for message in since:
        if message.get("role") == "assistant" or not turns:
            turns.append([])
        turns[-1].append(message)
    return turns


def continued_messages(
    sent: list[dict],
    answer: str,
    message: str,
    *,
    tool_calls: list[dict] | None = None,
    tool_results: dict[str, str] | None = None,
) -> list[dict]:
    """What a column sends next: what it sent, its own answer (with the tool calls it made), a `tool` message with
    the result of each call, then the follow-up when there is one. When what it sent ended with an assistant
    message (a prefill, the start the answer was made to continue), the answer completes that message rather than
    standing as a second assistant message in a row."""
    history = [dict(item) for item in sent]
    calls = [{"id": c["id"], "name": c["name"], "arguments": c["arguments"]} for c in tool_calls or []]
    own = {"tool_calls": calls} if calls else {}
    if history and history[-1].get("role") == "assistant" and isinstance(history[-1].get("content"), str):
        history[-1] = {"role": "assistant", "content": f"{history[-1]['content']}{answer}", **own}
    else:
        history.append({"role": "assistant", "content": answer, **own})
    results = tool_results or {}
    history += [
        {"role": "tool", "tool_call_id": call["id"], "content": results[call["id"]]}
        for call in calls
        if call["id"] in results
    ]
    return [*history, {"role": "user", "content": message}] if message.strip() else history
