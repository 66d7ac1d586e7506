"""An experiment's budget cap, held call by call: a run never spends more than its cap.

Before a call is sent, its worst case is reserved against the cap; once it is done, the reservation is replaced by
what it cost. The ledger is the experiment's row (`budget_reserved`: the worst cases of the calls in flight,
`budget_spent`: what the settled calls cost), changed only by conditional UPDATEs, so the cap holds across the
calls of one process, the processes of `--processes` and a worker the sweeper handed a round.

A call's worst case, at its model's catalog price: input, at most one token per character of its messages plus
MESSAGE_OVERHEAD_TOKENS a message; output, its max_tokens, else the model's maximum output from the catalog, else
WORST_OUTPUT_TOKENS (a stated estimate). An evaluation reserves the judge's ATTEMPTS calls (a reply that cannot be
read is asked once more). A call whose model has no known price cannot be capped: an experiment with a budget
must have a price for every model (`budget_check`, at creation).

What a call cost: from the usage the provider reported; when it reported none, nothing if no text came back (the
request failed before an answer), else the worst case (never less than it may have cost).

A call that does not fit while other calls hold reservations waits for one of them to settle (they usually settle
far below their worst case) and tries again; when none is outstanding and it still does not fit, the run stops:
the rounds not yet started are cancelled, the evaluations not yet started skipped, and the reason is kept on the
experiment (`experiment_budget_stop`).
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
from decimal import ROUND_CEILING, Decimal

from channels.db import database_sync_to_async
from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from lab.engine.fanout import Call
from lab.jobs.kinds import Lane
from lab.providers.answer import Answer, stored_cost
from lab.providers.base import ModelInfo

from ..models import Output, OutputStatus, Round, RoundStatus
from .announce import experiment_announce
from .models import EvaluationStatus, Experiment

MESSAGE_OVERHEAD_TOKENS = 8  # a message's role and separators, on every provider's tokenizer we know of
WORST_OUTPUT_TOKENS = 4096  # an answer without max_tokens, of a model whose catalog gives no maximum output
JUDGE_ATTEMPTS = 2  # judging.calls.ATTEMPTS: a reply that cannot be read is asked once more
NOT_STARTED = "Not started: the budget cap was reached."
NOT_EVALUATED = "Not evaluated: the budget cap was reached."
POLL_S = 0.25  # how often a waiting call looks again for room freed by another process's calls
CENT_FRACTION = Decimal("0.00000001")  # the ledger's precision (8 places), rounded up: never under-reserved


class Outcome(enum.Enum):
    RESERVED = "reserved"
    WAIT = "wait"  # it does not fit now, but calls in flight hold reservations that will be freed
    STOPPED = "stopped"


def worst_case(*, characters: int, messages: int, max_tokens: int | None, info: ModelInfo | None) -> Decimal | None:
    """The most one call may cost, in dollars; None when its price is unknown."""
    if info is None or info.input_price_per_mtok is None or info.output_price_per_mtok is None:
        return None
    input_tokens = characters + MESSAGE_OVERHEAD_TOKENS * messages
    output_tokens = max_tokens or info.max_output_tokens or WORST_OUTPUT_TOKENS
    dollars = (
        Decimal(input_tokens) * Decimal(str(info.input_price_per_mtok))
        + Decimal(output_tokens) * Decimal(str(info.output_price_per_mtok))
    ) / Decimal(1_000_000)
    return dollars.quantize(CENT_FRACTION, rounding=ROUND_CEILING)


def call_worst_case(call: Call) -> Decimal | None:
    messages = call.request.messages
    characters = sum(len(str(message.get("content", ""))) for message in messages)
    max_tokens = call.request.params.get("max_tokens")
    return worst_case(characters=characters, messages=len(messages), max_tokens=max_tokens, info=call.model_info)


def settled_cost(answer: Answer, reserved: Decimal) -> Decimal:
    """What a finished call counts for in the ledger (see the module's docstring)."""
    if answer.cost is not None:
        return stored_cost(answer.cost)  # as the answer's row keeps it: the ledger and the rows' sum agree
    return reserved if answer.text else Decimal(0)


def budget_check(*, budget: Decimal | None, calls: int, unpriced_calls: int) -> None:
    """A budget can only cap calls of known price: refused (400 naming `budget`) when any of the run's `calls` (its
    estimate's) is of unknown price. Counts, not the estimate, so that this module needs nothing the estimate imports
    (compare.rounds.worker imports this module)."""
    if budget is None:
        return
    if unpriced_calls:
        raise ValidationError(
            {
                "budget": f"{unpriced_calls} of the {calls} calls use a model without a known price, so a budget "
                "cap cannot hold them; run without a budget, or use models whose price the catalog gives."
            }
        )


def budget_reserve(*, experiment_id: int, amount: Decimal) -> Outcome:
    """Reserve `amount` if the cap has room for it beside what is spent and reserved (one conditional UPDATE)."""
    ledger = Experiment.objects.filter(pk=experiment_id, stopped_reason="")
    fits = ledger.filter(budget__gte=F("budget_spent") + F("budget_reserved") + amount)
    if fits.update(budget_reserved=F("budget_reserved") + amount):
        return Outcome.RESERVED
    state = Experiment.objects.filter(pk=experiment_id).values("stopped_reason", "budget_reserved").first()
    if state is None or state["stopped_reason"]:
        return Outcome.STOPPED
    if state["budget_reserved"] > 0:
        return Outcome.WAIT
    return experiment_budget_stop(experiment_id=experiment_id, needed=amount)


def budget_settle(*, experiment_id: int, reserved: Decimal, cost: Decimal) -> None:
    Experiment.objects.filter(pk=experiment_id).update(
        budget_reserved=F("budget_reserved") - reserved, budget_spent=F("budget_spent") + cost
    )


@transaction.atomic
def experiment_budget_stop(*, experiment_id: int, needed: Decimal) -> Outcome:
    """The next call's worst case does not fit even with nothing in flight: cancel the rounds not yet started and
    skip the evaluations not yet started, saying why. WAIT when, under the row's lock, another call turns out to
    hold a reservation after all (another process reserved meanwhile): nothing is in flight once it stops, so the
    spent it states is the run's last."""
    experiment = Experiment.objects.select_for_update().filter(pk=experiment_id).first()
    if experiment is None or experiment.stopped_reason:
        return Outcome.STOPPED
    if experiment.budget_reserved > 0:
        return Outcome.WAIT
    experiment.stopped_reason = (
        f"Stopped at the budget cap of ${experiment.budget.normalize():f}: ${experiment.budget_spent.normalize():f} "
        f"spent, and the next call could cost up to ${needed.normalize():f}. Calls not yet started were not made."
    )
    experiment.save(update_fields=["stopped_reason"])
    now = timezone.now()
    queued = Round.objects.filter(group=experiment.group_id, run_id=experiment.run_id, status=RoundStatus.QUEUED)
    for round_id in queued.values_list("pk", flat=True):
        if Round.objects.transition(round_id, RoundStatus.CANCELLED, finished_at=now, error=experiment.stopped_reason):
            Output.objects.filter(round_id=round_id).unfinished().update(
                status=OutputStatus.CANCELLED, error=NOT_STARTED, finished_at=now
            )
    experiment.evaluations.filter(status=EvaluationStatus.QUEUED).update(
        status=EvaluationStatus.SKIPPED, reason=NOT_EVALUATED, finished_at=now
    )
    transaction.on_commit(lambda: experiment_announce(experiment_id))
    return Outcome.STOPPED


# Set when a call of this process settles, so a call waiting for room looks again at once (one per experiment;
# the engine's loop is the only one that waits).
_settled: dict[int, asyncio.Event] = {}


async def reserve_or_wait(experiment_id: int, amount: Decimal) -> bool:
    """Reserve `amount`, waiting while calls in flight may free room; False when the run stopped."""
    while True:
        settled = _settled.setdefault(experiment_id, asyncio.Event())
        settled.clear()
        trying = asyncio.ensure_future(
            database_sync_to_async(budget_reserve)(experiment_id=experiment_id, amount=amount)
        )
        try:
            outcome = await asyncio.shield(trying)
        except asyncio.CancelledError:
            # The UPDATE runs to its end on its thread either way: give back what it may have reserved.
            if await trying is Outcome.RESERVED:
                await database_sync_to_async(budget_settle)(
                    experiment_id=experiment_id, reserved=amount, cost=Decimal(0)
                )
            raise
        if outcome is not Outcome.WAIT:
            return outcome is Outcome.RESERVED
        with contextlib.suppress(TimeoutError):  # after POLL_S: another process's call may have settled
            await asyncio.wait_for(settled.wait(), POLL_S)


async def settle(experiment_id: int, reserved: Decimal, cost: Decimal) -> None:
    await database_sync_to_async(budget_settle)(experiment_id=experiment_id, reserved=reserved, cost=cost)
    if event := _settled.get(experiment_id):
        event.set()


class ExperimentSpending:
    """The engine's Spending (lab.engine.fanout) for the answers of one budgeted experiment."""

    def __init__(self, experiment_id: int):
        self.experiment_id = experiment_id
        self.reserved: dict[int, Decimal] = {}  # call key → its reservation

    async def reserve(self, call: Call) -> str | None:
        amount = call_worst_case(call)
        if amount is None:
            return "Not started: its model has no known price, so the budget cap cannot hold it."
        if not await reserve_or_wait(self.experiment_id, amount):
            return NOT_STARTED
        self.reserved[call.key] = amount
        return None

    async def settle(self, call: Call, answer: Answer) -> None:
        reserved = self.reserved.pop(call.key)
        await settle(self.experiment_id, reserved, settled_cost(answer, reserved))


def rounds_spending(rounds: list[Round]) -> dict[int, ExperimentSpending]:
    """The spending of each of these rounds that belongs to a budgeted experiment's run: one query, none when all
    are interactive (an experiment's rounds are batch work)."""
    rounds = [r for r in rounds if r.lane == Lane.BATCH and r.run_id is not None]
    if not rounds:
        return {}
    budgeted = Experiment.objects.filter(group__in={r.group_id for r in rounds}, budget__isnull=False)
    runs = {(group_id, run_id): pk for pk, group_id, run_id in budgeted.values_list("pk", "group_id", "run_id")}
    spending = {pk: ExperimentSpending(pk) for pk in set(runs.values())}
    return {r.pk: spending[runs[(r.group_id, r.run_id)]] for r in rounds if (r.group_id, r.run_id) in runs}


def evaluation_worst_case(*, input_tokens_estimate: int, info: ModelInfo | None) -> Decimal | None:
    """An evaluation's worst case: the judge's attempts, each of its whole prompt (the estimate counts about four
    characters a token; a character may be a token) and its maximum output."""
    one = worst_case(characters=4 * input_tokens_estimate + 4, messages=2, max_tokens=None, info=info)
    return None if one is None else one * JUDGE_ATTEMPTS


def evaluation_cost(cost: Decimal | None, calls: int, reserved: Decimal) -> Decimal:
    """What a finished evaluation counts for in the ledger: its cost, or its worst case when calls were made and
    their cost is unknown."""
    if cost is not None:
        return cost
    return reserved if calls else Decimal(0)
