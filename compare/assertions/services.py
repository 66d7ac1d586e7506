"""Grading stored answers: which assertions apply to a round (the comparison's, then its dataset row's, as a
promptfoo test's `assert` follows its `defaultTest`'s), the results written per answer, and re-grading on request.

Grading reads only what is stored (the answer's text, latency, cost and the round's variables): no model is called,
so it runs inside the transaction that finishes the rounds and again whenever someone re-runs it. Only complete
answers are graded (status ok, a cut-off one included, as promptfoo grades it); an error, timeout or cancellation
has no verdict (`assertions_passed` None), which keeps a provider outage out of the pass rates.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.core.exceptions import ValidationError
from django.db import transaction
from django.db.models import Q

from lab.assertions import AnswerFacts, AssertionSpec, grade, parse_assertions

from ..models import CompareGroup, Output, OutputStatus, Round, RoundStatus
from .models import AssertionResult

FIELD = "assertions"


def assertions_parse(raw: Any, *, where: str = FIELD) -> list[dict]:
    """A list as given (promptfoo's `assert`), validated; what a group or a row stores. Raises ValidationError
    naming `where` and each bad entry's index and key."""
    return [spec.as_dict() for spec in parse_assertions(raw, where=where)]


def row_assertions_parse(raw: Any, *, row_label: str) -> tuple[list[dict], list[str]]:
    """A dataset row's own list, and the problems with it as the `rows` field's messages ("Row 3: assertions: …")."""
    try:
        return assertions_parse(raw or [], where="rows"), []
    except ValidationError as error:
        return [], [f"{row_label}: assertions: {message}" for message in error.message_dict["rows"]]


def round_specs(group_assertions: list[dict], row_assertions: list[dict] | None) -> list[AssertionSpec]:
    """The round's effective list: the comparison's first, then its dataset row's."""
    return [
        *parse_assertions(group_assertions or [], where=FIELD),
        *parse_assertions(row_assertions or [], where="row.assertions"),
    ]


def _with_assertions() -> Q:
    """Rounds that have something to grade: their group's list or their row's is not empty."""
    return ~Q(group__assertions=[]) | (Q(dataset_row__isnull=False) & ~Q(dataset_row__assertions=[]))


def rounds_grade(round_ids: Iterable[int]) -> int:
    """Grade every answer of these rounds against their effective assertions, replacing earlier results.
    Returns how many answers got a verdict."""
    rounds = list(
        Round.objects.filter(pk__in=list(round_ids))
        .filter(_with_assertions())
        .select_related("group", "dataset_row")
        .order_by()
    )
    if not rounds:
        return 0
    specs_by_round = {
        r.pk: round_specs(r.group.assertions, r.dataset_row.assertions if r.dataset_row else []) for r in rounds
    }
    rounds_by_id = {r.pk: r for r in rounds}
    outputs = list(Output.objects.filter(round_id__in=specs_by_round).select_related("variant").order_by("pk"))
    results: list[AssertionResult] = []
    for output in outputs:
        output.assertions_passed, output.assertions_score = None, None
        specs = specs_by_round[output.round_id]
        if output.status != OutputStatus.OK or not specs:
            continue
        variables = {**rounds_by_id[output.round_id].variables, **output.variant.variables}
        facts = AnswerFacts(output=output.text, latency_ms=output.latency_ms, cost=output.cost, vars=variables)
        grading = grade(specs, facts)
        output.assertions_passed, output.assertions_score = grading.passed, grading.score
        results.extend(
            AssertionResult(
                output=output,
                position=position,
                type=component.spec.type,
                metric=component.spec.metric or "",
                passed=component.passed,
                score=component.score,
                reason=component.reason,
            )
            for position, component in enumerate(grading.components)
        )
    with transaction.atomic():
        AssertionResult.objects.filter(output__in=outputs).delete()
        AssertionResult.objects.bulk_create(results)
        Output.objects.bulk_update(outputs, ["assertions_passed", "assertions_score"])
    return sum(output.assertions_passed is not None for output in outputs)


def on_round_finished(sender, round_ids: list[int], **kwargs) -> None:
    """compare.hooks.round_finished: grade the finished rounds in the finishing transaction (no call is made, and
    a round without assertions costs the one query that finds none)."""
    rounds_grade(round_ids)


@transaction.atomic
def assertions_rerun(*, group: CompareGroup, assertions: Any = None) -> dict[str, int]:
    """Re-grade every finished round of the comparison from the stored answers, without calling any model.

    With `assertions`, the comparison's list is replaced first. Unlike its other settings, a comparison's
    assertions may change after it has rounds: they never change what a model was asked, only how its stored
    answers are read, and every answer is re-graded with the new list in the same transaction.
    """
    if assertions is not None:
        group.assertions = assertions_parse(assertions)
        group.save(update_fields=["assertions", "updated_at"])
    done = list(group.rounds.filter(status=RoundStatus.DONE).values_list("pk", flat=True))
    # Rounds that no longer have any assertion lose their old results too.
    Output.objects.filter(round_id__in=done).exclude(assertions_passed=None).update(
        assertions_passed=None, assertions_score=None
    )
    AssertionResult.objects.filter(output__round_id__in=done).delete()
    graded = rounds_grade(done)
    return {"rounds": len(done), "graded": graded}
