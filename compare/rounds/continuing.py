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
def round_continue(*, round: Round, user, message: str) -> Round:  # noqa: A002 (the services' keyword is `round`)
    """Queue the next turn of `round`'s conversation with the user's follow-up `message`; the new round is enqueued
    once the transaction commits."""
    if not isinstance(message, str) or not message.strip():
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
    previous = {output.variant_id: output for output in round.outputs.all()}
    if not any(output.status == OutputStatus.OK for output in previous.values()):
        raise NotContinuable({"round": f"No answer of round {round.number} finished: there is nothing to continue."})
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
        _next_output(turn, variant, previous.get(variant.pk), message, now) for variant in variants
    )
    enqueue_on_commit(ROUND, turn.pk, queue=Lane.INTERACTIVE)
    return turn


def _next_output(turn: Round, variant, before: Output | None, message: str, now) -> Output:
    if before is None or before.status != OutputStatus.OK:
        ended = "was not asked" if before is None else _ENDED.get(before.status, "did not finish")
        return Output(
            round=turn,
            variant=variant,
            status=OutputStatus.ERROR,
            error=f"Not continued: its answer in turn {turn.turn - 1} {ended}.",
            finished_at=now,
        )
    return Output(
        round=turn,
        variant=variant,
        rendered_system_prompt=before.rendered_system_prompt,
        rendered_prompt=message,
        messages=continued_messages(before.messages, before.text, message),
    )


def split_turns(messages: list[dict], turn: int) -> tuple[list[dict], list[dict]]:
    """A column's messages at `turn`, in two: the first turn's (system prompt, few-shot turns, its prompt) and
    those since, two per later turn (the column's own answer, then the follow-up). The one place that knows how a
    conversation's messages are laid out: the comparison page and the judge read turns through it."""
    later = 2 * (turn - 1)
    if later <= 0 or len(messages) < later:
        return list(messages), []
    return list(messages[:-later]), list(messages[-later:])


def continued_messages(sent: list[dict], answer: str, message: str) -> list[dict]:
    """What a column sends next: what it sent, its own answer, then the follow-up. When what it sent ended with an
    assistant message (a prefill, the start the answer was made to continue), the answer completes that message
    rather than standing as a second assistant message in a row."""
    history = [dict(item) for item in sent]
    if history and history[-1].get("role") == "assistant" and isinstance(history[-1].get("content"), str):
        history[-1] = {"role": "assistant", "content": f"{history[-1]['content']}{answer}"}
    else:
        history.append({"role": "assistant", "content": answer})
    return [*history, {"role": "user", "content": message}]
