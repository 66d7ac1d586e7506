"""Reads for the comparison pages: the history list, a round as one person sees it, and the editor's checks.

Votes belong to the voting app, which compare must not import: the history's vote figures are annotations that
voting registers in compare/hooks.py, as it registers blind mode's reveal check.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Any

from django.core.exceptions import ValidationError
from django.db.models import Count, Exists, IntegerField, OuterRef, Q, QuerySet, Subquery, Value
from django.db.models.functions import Coalesce
from django.http import Http404

from lab.jobs.workers import WorkerStatus, worker_status
from lab.models import Connection, ConnectionKind, Workspace
from lab.providers.message_rules import content_text
from lab.providers.params import check_params

from .assertions.selectors import results_by_output
from .blind import outputs_as_seen_by
from .catalog import resolve_model
from .hooks import history_annotations
from .models import ROUND_UNFINISHED, CompareGroup, Output, OutputStatus, Round, RoundStatus, Variant
from .rounds.continuing import later_turns, split_turns
from .selectors import group_settings, round_with_outputs


def count_per_group(queryset: QuerySet, counted: str) -> Coalesce:
    """A correlated COUNT per group: cheaper than joins plus GROUP BY when only one page of groups is read."""
    per_group = queryset.order_by().values("group").annotate(n=Count(counted)).values("n")[:1]
    return Coalesce(Subquery(per_group, output_field=IntegerField()), Value(0))


def history(
    workspace: Workspace,
    *,
    q: str = "",
    mode: str = "",
    model: str = "",
    author: int | None = None,
    date_from: date | None = None,
    date_to: date | None = None,
) -> QuerySet[CompareGroup]:
    """The workspace's comparisons, newest first, with their round count and what other apps register annotated.

    Filters use EXISTS rather than joins, so no DISTINCT is needed and the newest-first index still serves
    the page. Read one page at a time: the annotations are correlated subqueries, evaluated per row shown.
    """
    groups = CompareGroup.objects.filter(workspace=workspace)
    if q:
        in_variants = Variant.objects.filter(group=OuterRef("pk")).filter(
            Q(prompt__icontains=q) | Q(label__icontains=q) | Q(model__icontains=q)
        )
        groups = groups.filter(Q(title__icontains=q) | Q(system_prompt__icontains=q) | Exists(in_variants))
    if mode:
        groups = groups.filter(mode=mode)
    if model:
        groups = groups.filter(Exists(Variant.objects.filter(group=OuterRef("pk"), model=model)))
    if author:
        groups = groups.filter(created_by_id=author)
    if date_from:
        groups = groups.filter(created_at__date__gte=date_from)
    if date_to:
        groups = groups.filter(created_at__date__lte=date_to)
    registered = history_annotations()
    return (
        groups.select_related("created_by")
        .annotate(round_count=count_per_group(Round.objects.filter(group=OuterRef("pk")), "pk"), **registered)
        .prefetch_related("variants")
        .order_by("-created_at", "-id")
    )


def history_models(workspace: Workspace) -> list[str]:
    """Every model id the workspace's comparisons used, for the history's model filter."""
    return list(
        Variant.objects.filter(group__workspace=workspace).order_by("model").values_list("model", flat=True).distinct()
    )


def simulated_connections(workspace: Workspace) -> set[str]:
    """Names of the workspace's simulated connections: their models are labelled "simulated" everywhere."""
    return set(
        Connection.objects.filter(workspace=workspace, kind=ConnectionKind.SIMULATED).values_list("name", flat=True)
    )


def group_round(group: CompareGroup, number: int | None) -> Round | None:
    """The round with this number, the latest when `number` is None, or None when the group has no rounds."""
    rounds = group.rounds.order_by("-number")
    if number is None:
        return rounds.first()
    round_ = rounds.filter(number=number).first()
    if round_ is None:
        raise Http404("This comparison has no such round.")
    return round_


@dataclass(frozen=True)
class RunProgress:
    done: int
    total: int


def run_progress(round_: Round) -> RunProgress:
    """How far the run (one "run N" request) this round belongs to has got."""
    counts = Round.objects.filter(run_id=round_.run_id).aggregate(
        total=Count("id"), unfinished=Count("id", filter=Q(status__in=ROUND_UNFINISHED))
    )
    return RunProgress(done=counts["total"] - counts["unfinished"], total=counts["total"])


@dataclass(frozen=True)
class RoundView:
    """A round as one person sees it: columns in their order, with names only when they may see them."""

    round: Round
    outputs: list[Output]
    labels_visible: bool
    totals: dict[str, Any]
    progress: RunProgress
    last_number: int
    # Asked only while the round is unfinished: a round that waits on a worker says so when none is running.
    worker: WorkerStatus | None = None
    parent_number: int | None = None  # the round this turn continues (a later turn of a conversation)

    @property
    def continuable(self) -> bool:
        """Whether the follow-up box may send: the round finished and some answer of it is complete."""
        return self.round.status == RoundStatus.DONE and any(o.status == OutputStatus.OK for o in self.outputs)


@dataclass(frozen=True)
class EarlierTurn:
    """One earlier turn of a column's conversation as its column shows it: its own answer, then the follow-up."""

    turn: int
    answer: str
    follow_up: str


def earlier_turns(output: Output, turn: int) -> list[EarlierTurn]:
    """The column's own earlier answers and the follow-ups after them (none on turn 1, or for a column that was not
    continued). Its first prompt is not among them: in a blind round it could tell the variant."""
    _, since = split_turns(output.messages, turn)
    return [
        EarlierTurn(index, content_text(block[0].get("content")), _follow_up(block[1:]))
        for index, block in enumerate(later_turns(since), start=1)
    ]


def _follow_up(messages: list[dict]) -> str:
    """What the column was sent after an answer: each tool call's result, then the follow-up message."""
    return "\n\n".join(
        f"Tool result ({m['tool_call_id']}): {m.get('content', '')}"
        if m.get("role") == "tool"
        else content_text(m.get("content"))
        for m in messages
    )


def round_view(round_: Round, user) -> RoundView:
    round_ = round_with_outputs(round_)
    outputs, visible = outputs_as_seen_by(round_, user)
    results = results_by_output(outputs, figures=visible)
    for output in outputs:
        output.assertion_list = results.get(output.pk, [])
        output.earlier = earlier_turns(output, round_.turn)
    last = round_.group.rounds.order_by("-number").values_list("number", flat=True).first() or round_.number
    return RoundView(
        round=round_,
        outputs=outputs,
        labels_visible=visible,
        totals=round_totals(outputs),
        progress=run_progress(round_),
        last_number=last,
        worker=worker_status() if round_.status in ROUND_UNFINISHED else None,
        parent_number=round_.parent.number if round_.parent_id else None,
    )


def round_totals(outputs: list[Output]) -> dict[str, Any]:
    """The round's footer: the slowest answer, tokens and cost summed; `cost_complete` is False when a finished
    answer's cost is unknown (a model without a published price), so the sum is a lower bound."""
    finished = [o for o in outputs if o.finished_at is not None]
    latencies = [o.latency_ms for o in finished if o.latency_ms is not None]
    costs = [o.cost for o in finished if o.cost is not None]
    return {
        "latency_ms": max(latencies) if latencies else None,
        "input_tokens": sum(o.input_tokens or 0 for o in finished),
        "output_tokens": sum(o.output_tokens or 0 for o in finished),
        "tokens_estimated": any(o.tokens_estimated for o in finished),
        "cost": sum(costs, Decimal(0)) if costs else None,
        "cost_complete": not any(o.unpriced for o in finished),
    }


def params_problems(workspace: Workspace, params: dict[str, Any], models: list[str]) -> list[str]:
    """Why a run with these parameters would be refused, one message per model and parameter, before running.

    Unknown or malformed model ids are named too, so the editor can say so next to the run button.
    """
    problems: list[str] = []
    for model_id in dict.fromkeys(m.strip() for m in models if m and m.strip()):
        try:
            connection, info = resolve_model(workspace, model_id)
        except ValidationError as exc:
            problems.append(f"{model_id}: {' '.join(exc.messages)}")
            continue
        problems += check_params(params, [(model_id, info)], kinds={model_id: connection.kind})
    return problems


def editor_initial(group: CompareGroup | None) -> dict[str, Any] | None:
    """A group's settings in the editor's shape, for "clone and edit"; None for a new comparison."""
    if group is None:
        return None
    return {"cloned_from": group.pk, "dataset": group.dataset_id, **group_settings(group)}
