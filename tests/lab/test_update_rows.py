"""update_rows: each row gets exactly the values `save()` would store, whatever their type (text with quotes,
backslashes, newlines and characters beyond ASCII, decimals, timestamps to the microsecond, JSON, nulls,
booleans); only the rows given, only in the statuses given; expressions read the row as it was."""

import uuid
from datetime import UTC, datetime
from decimal import Decimal

import pytest
from django.forms.models import model_to_dict

from compare.models import Output, Round
from lab.update_rows import update_rows
from tests.fixtures.compare_factories import make_group

pytestmark = pytest.mark.django_db

FIELDS = ["status", "text", "error", "cost", "started_at", "tool_calls", "schema_valid", "output_tokens", "cached"]
AWKWARD = 'say "hi", it\'s tab\there, new\nline, back\\slash, {braces}, [1, 2], naïve — 漢字 🙂, NaN'


def _outputs(workspace, owner, count: int) -> list[Output]:
    group = make_group(workspace, owner)
    variant = group.variants.first()
    rounds = [Round.objects.create(group=group, number=n, variables={}) for n in range(1, count + 1)]
    return [Output.objects.create(round=r, variant=variant) for r in rounds]


def _stored(output: Output) -> dict:
    output.refresh_from_db()
    return {name: value for name, value in model_to_dict(output).items() if name in FIELDS}


def test_every_value_arrives_as_save_stores_it(workspace, owner):
    updated, saved, untouched = _outputs(workspace, owner, 3)
    values = {
        "status": "ok",
        "text": AWKWARD,
        "error": "",
        "cost": Decimal("0.00012345"),
        "started_at": datetime(2026, 12, 6, 23, 59, 58, 123456, tzinfo=UTC),
        "tool_calls": [{"name": "get_weather", "arguments": '{"city": "Zürich"}', "nested": {"n": None}}],
        "schema_valid": False,
        "output_tokens": 2**31 - 1,
        "cached": True,
    }
    for name, value in values.items():
        setattr(saved, name, value)
    saved.save()

    done = update_rows(FIELDS, [[updated.pk, *values.values()]], model=Output)

    assert done == [updated.pk]
    assert _stored(updated) == _stored(saved) == values
    assert _stored(untouched)["status"] == "queued"


def test_nulls_and_rows_each_their_own(workspace, owner):
    first, second = _outputs(workspace, owner, 2)
    first.cost, first.schema_valid, first.output_tokens = Decimal("1.5"), True, 3
    first.save()

    update_rows(
        ["cost", "schema_valid", "output_tokens"],
        [[first.pk, None, None, None], [second.pk, "2", True, 4]],
        model=Output,
    )

    assert (_stored(first)["cost"], _stored(first)["schema_valid"], _stored(first)["output_tokens"]) == (
        None,
        None,
        None,
    )
    assert (_stored(second)["cost"], _stored(second)["schema_valid"]) == (Decimal("2"), True)


def test_only_the_statuses_given_and_expressions_read_the_row_as_it_was(workspace, owner):
    running, cancelled = _outputs(workspace, owner, 2)
    Output.objects.filter(pk=running.pk).update(status="running", text="partial")
    Output.objects.filter(pk=cancelled.pk).update(status="cancelled", text="kept")

    done = update_rows(
        ["status", "text"],
        [[running.pk, "ok", "whole"], [cancelled.pk, "ok", "whole"]],
        model=Output,
        expressions={"text": "o.text || ' + ' || {value}"},
        only_status=["running"],
    )

    assert done == [running.pk]
    assert (_stored(running)["status"], _stored(running)["text"]) == ("ok", "partial + whole")
    assert (_stored(cancelled)["status"], _stored(cancelled)["text"]) == ("cancelled", "kept")


def test_rounds_take_their_own_fields(workspace, owner):
    [output] = _outputs(workspace, owner, 1)
    round_ = output.round
    deadline, claimant = datetime(2026, 12, 7, 1, 2, 3, 4, tzinfo=UTC), uuid.uuid4()

    assert update_rows(["status", "deadline", "claimed_by"], [[round_.pk, "running", deadline, claimant]], model=Round)

    round_.refresh_from_db()
    assert (round_.status, round_.deadline, round_.claimed_by) == ("running", deadline, claimant)
