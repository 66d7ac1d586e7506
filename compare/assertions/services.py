"""Grading stored answers: which assertions apply to a round (the comparison's, then its dataset row's, as a
promptfoo test's `assert` follows its `defaultTest`'s), the results written per answer, and re-grading on request.

Grading reads only what is stored (the answer's text, latency, cost and the round's variables): no model is called,
so it runs inside the transaction that finishes the rounds and again whenever someone re-runs it. A model-graded
assertion (`llm-rubric`, `g-eval`, `model-graded-closedqa`, `similar`) is stored pending and the `assertions_pending`
hook asks judging for a grading job; `output_grades_record` fills the results in and gives the answer its verdict
once none is pending (none at all when a grader failed: "not graded", never a failure of the answer). Only complete
answers are graded (status ok, a cut-off one included, as promptfoo grades it); an error, timeout or cancellation
has no verdict (`assertions_passed` None), which keeps a provider outage out of the pass rates.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q

from lab.assertions import (
    GRADED,
    NOT_GRADED,
    PENDING,
    AnswerFacts,
    AssertionSpec,
    ComponentResult,
    combine,
    grade,
    is_model_graded,
    parse_assertions,
)
from lab.events import RESYNC, resync
from lab.models import Connection, ConnectionKind, Workspace
from lab.realtime import broadcast, group_channel

from ..hooks import assertions_pending
from ..models import CompareGroup, Output, OutputStatus, Round, RoundStatus
from .models import AssertionResult

FIELD = "assertions"
# Connections whose API has OpenAI's `/embeddings` (what `similar` calls).
EMBEDDING_KINDS = frozenset({ConnectionKind.OPENAI, ConnectionKind.OPENAI_COMPATIBLE})


def assertions_parse(raw: Any, *, where: str = FIELD, workspace: Workspace | None = None) -> list[dict]:
    """A list as given (promptfoo's `assert`), validated; what a group or a row stores. Raises ValidationError
    naming `where` and each bad entry's index and key. With `workspace`, a model-graded entry's `provider` must
    name one of its connections (an OpenAI-compatible one for `similar`)."""
    specs = parse_assertions(raw, where=where)
    if workspace is not None:
        problems = graders_check(specs, workspace)
        if problems:
            raise ValidationError({where: problems})
    return [spec.as_dict() for spec in specs]


def graders_check(specs: list[AssertionSpec], workspace: Workspace) -> list[str]:
    """What is missing for the model-graded entries' graders in this workspace, one message per entry."""
    named = [(index, spec) for index, spec in enumerate(specs) if is_model_graded(spec)]
    if not named:
        return []
    # By name, as lab.catalog finds a model's connection (a private one included: names are unique in a workspace).
    kinds = dict(Connection.objects.filter(workspace=workspace).values_list("name", "kind"))
    problems = []
    for index, spec in named:
        connection = spec.provider.split("::", 1)[0]
        key = f"assert[{index}].provider"
        if spec.base_type == "similar" and kinds.get(connection) not in EMBEDDING_KINDS:
            found = "is not OpenAI-compatible" if connection in kinds else "does not exist in this workspace"
            problems.append(
                f"{key}: 'similar' needs an embeddings connection (OpenAI or OpenAI-compatible, with /embeddings); "
                f"the connection '{connection}' {found}."
            )
        elif connection not in kinds:
            problems.append(f"{key}: the grader's connection '{connection}' does not exist in this workspace.")
    return problems


def row_assertions_parse(
    raw: Any, *, row_label: str, workspace: Workspace | None = None
) -> tuple[list[dict], list[str]]:
    """A dataset row's own list, and the problems with it as the `rows` field's messages ("Row 3: assertions: …")."""
    try:
        return assertions_parse(raw or [], where="rows", workspace=workspace), []
    except ValidationError as error:
        return [], [f"{row_label}: assertions: {message}" for message in error.message_dict["rows"]]


def round_specs(group_assertions: list[dict], row_assertions: list[dict] | None) -> list[AssertionSpec]:
    """The round's effective list: the comparison's first, then its dataset row's."""
    return [
        *parse_assertions(group_assertions or [], where=FIELD),
        *parse_assertions(row_assertions or [], where="row.assertions"),
    ]


def with_assertions() -> Q:
    """Rounds that have something to grade: their group's list or their row's is not empty (the finish reads it
    with the rounds it finished, so a round without assertions costs its grading no query)."""
    return ~Q(group__assertions=[]) | (Q(dataset_row__isnull=False) & ~Q(dataset_row__assertions=[]))


def rounds_grade(round_ids: Iterable[int]) -> int:
    """Grade every answer of these rounds against their effective assertions, replacing earlier results.
    Returns how many answers got a verdict."""
    rounds = list(
        Round.objects.filter(pk__in=list(round_ids))
        .filter(with_assertions())
        .select_related("group", "dataset_row")
        .order_by()
    )
    if not rounds:
        return 0
    specs_by_round = {
        r.pk: round_specs(r.group.assertions, r.dataset_row.assertions if r.dataset_row else []) for r in rounds
    }
    rounds_by_id = {r.pk: r for r in rounds}
    outputs = list(Output.objects.filter(round_id__in=specs_by_round).select_related("variant__group").order_by("pk"))
    results: list[AssertionResult] = []
    pending: list[int] = []
    for output in outputs:
        output.assertions_passed, output.assertions_score = None, None
        specs = specs_by_round[output.round_id]
        if output.status != OutputStatus.OK or not specs:
            continue
        facts = _facts(output, rounds_by_id[output.round_id].variables)
        grading = grade(specs, facts)
        output.assertions_passed, output.assertions_score = grading.passed, grading.score
        results.extend(_row(output, position, component) for position, component in enumerate(grading.components))
        if any(component.state == PENDING for component in grading.components):
            pending.append(output.pk)
    with transaction.atomic():
        AssertionResult.objects.filter(output__in=outputs).delete()
        AssertionResult.objects.bulk_create(results)
        Output.objects.bulk_update(outputs, ["assertions_passed", "assertions_score"])
        if pending:
            assertions_pending.send(sender=AssertionResult, output_ids=pending)
    return sum(output.assertions_passed is not None for output in outputs)


def _row(output: Output, position: int, component: ComponentResult) -> AssertionResult:
    graded = component.state == GRADED
    return AssertionResult(
        output=output,
        position=position,
        type=component.spec.type,
        metric=component.spec.metric or "",
        passed=component.passed if graded else None,
        score=component.score if graded else None,
        reason=component.reason,
        state=component.state,
    )


def output_specs(output: Output) -> list[AssertionSpec]:
    """The answer's effective assertions, in the order its results are stored."""
    round_ = output.round
    return round_specs(round_.group.assertions, round_.dataset_row.assertions if round_.dataset_row else [])


def output_facts(output: Output) -> AnswerFacts:
    return _facts(output, output.round.variables)


def _facts(output: Output, round_variables: dict) -> AnswerFacts:
    variables = {**round_variables, **output.variant.variables}
    return AnswerFacts(output.text, output.latency_ms, output.cost, variables, **tool_facts(output))


def tool_facts(output: Output) -> dict[str, list[dict]]:
    """An answer's tool calls in OpenAI's response form (what promptfoo's is-valid-openai-tools-call reads:
    `{"id", "type", "function": {"name", "arguments"}}`) and the tools its variant offered, for AnswerFacts."""
    tools, _, _ = output.variant.tool_settings()
    calls = [
        {
            "id": call.get("id", ""),
            "type": "function",
            "function": {"name": call["name"], "arguments": call["arguments"]},
        }
        for call in output.tool_calls or []
    ]
    return {"tool_calls": calls, "tools": list(tools or [])}


@transaction.atomic
def output_grades_record(*, output_id: int, grades: dict[int, tuple[bool, float, str] | str]) -> bool:
    """Fill in pending results (by AssertionResult pk): (pass, score, reason), or the grader's error as a string
    (the result becomes not graded). Results no longer pending (re-graded meanwhile) are left alone. Once none of
    the answer's results is pending, the answer gets its verdict. False when nothing was pending any more."""
    # One writer at a time per answer (two graders finishing together must not both miss the last pending one).
    output = Output.objects.select_for_update(of=("self",)).select_related(
        "round__group", "round__dataset_row", "variant"
    )
    output = output.get(pk=output_id)
    rows = list(AssertionResult.objects.filter(output=output).order_by("position"))
    changed = []
    for row in rows:
        if row.pk not in grades or row.state != PENDING:
            continue
        grade_of = grades[row.pk]
        if isinstance(grade_of, str):
            row.state, row.reason = NOT_GRADED, grade_of
        else:
            row.passed, row.score, row.reason = grade_of
            row.state = GRADED
        changed.append(row)
    if not changed:
        return False
    AssertionResult.objects.bulk_update(changed, ["passed", "score", "reason", "state"])
    # Open pages of the comparison reload their round over HTTP, now with the grader's results.
    transaction.on_commit(partial(broadcast, group_channel(output.round.group_id), RESYNC, **resync()))
    specs = output_specs(output)
    if len(specs) == len(rows) and not any(row.state == PENDING for row in rows):
        components = [
            ComponentResult(
                passed=bool(row.passed), score=row.score or 0.0, reason=row.reason, spec=spec, state=row.state
            )
            for row, spec in zip(rows, specs, strict=True)
        ]
        grading = combine(components)
        output.assertions_passed, output.assertions_score = grading.passed, grading.score
        output.save(update_fields=["assertions_passed", "assertions_score"])
    return True


def on_round_finished(sender, round_ids: list[int], graded: list[int] | None = None, **kwargs) -> None:
    """compare.hooks.round_finished: grade the finished rounds in the finishing transaction (no call is made).
    `graded`, the ones with assertions when the sender knows them: a finish without any costs no query."""
    to_grade = round_ids if graded is None else graded
    if to_grade:  # building the query alone costs a finish as much as a query
        rounds_grade(to_grade)


@transaction.atomic
def assertions_rerun(*, group: CompareGroup, assertions: Any = None) -> dict[str, int]:
    """Re-grade every finished round of the comparison from the stored answers, without calling any model.

    With `assertions`, the comparison's list is replaced first. Unlike its other settings, a comparison's
    assertions may change after it has rounds: they never change what a model was asked, only how its stored
    answers are read, and every answer is re-graded with the new list in the same transaction.
    """
    if assertions is not None:
        group.assertions = assertions_parse(assertions, workspace=group.workspace)
        group.save(update_fields=["assertions", "updated_at"])
    done = list(group.rounds.filter(status=RoundStatus.DONE).values_list("pk", flat=True))
    # Rounds that no longer have any assertion lose their old results too.
    Output.objects.filter(round_id__in=done).exclude(assertions_passed=None).update(
        assertions_passed=None, assertions_score=None
    )
    AssertionResult.objects.filter(output__round_id__in=done).delete()
    graded = rounds_grade(done)
    return {"rounds": len(done), "graded": graded}
