"""copy_insert: the rows COPY writes are the rows bulk_create would write, defaults and given values alike."""

from datetime import UTC, datetime
from decimal import Decimal

import pytest
from django.forms.models import model_to_dict

from compare.models import CachedAnswer, Output, Round
from lab.copy_insert import copy_insert, copy_instances
from tests.fixtures.compare_factories import make_group

pytestmark = pytest.mark.django_db


def _round(group, number: int) -> Round:
    return Round.objects.create(group=group, number=number, variables={})


def _fields(output: Output) -> dict:
    return {name: value for name, value in model_to_dict(output).items() if name not in ("id", "round")}


def test_a_row_left_to_its_defaults_is_the_row_bulk_create_writes(workspace, owner):
    group = make_group(workspace, owner)
    variant = group.variants.first()
    copied, created = _round(group, 1), _round(group, 2)

    copy_insert(Output, [{"round_id": copied.pk, "variant_id": variant.pk}])
    Output.objects.bulk_create([Output(round=created, variant=variant)])

    assert _fields(copied.outputs.get()) == _fields(created.outputs.get())
    assert copied.outputs.get().status == "queued"


def test_given_values_arrive_exactly_and_each_row_is_its_own(workspace, owner):
    group = make_group(workspace, owner)
    first, second = group.variants.order_by("position")
    round_ = _round(group, 1)
    started = datetime(2026, 12, 4, 23, 30, 1, 250000, tzinfo=UTC)
    given = {"text": "tab\there, new\nline, back\\slash", "cost": Decimal("0.00012345"), "started_at": started}

    copy_insert(
        Output,
        [
            {"round_id": round_.pk, "variant_id": first.pk, **given},
            {"round_id": round_.pk, "variant_id": second.pk, "status": "ok", "output_tokens": 7},
        ],
    )

    one, two = round_.outputs.order_by("variant__position")
    assert (one.text, one.cost, one.started_at, one.status) == (given["text"], given["cost"], started, "queued")
    assert (two.text, two.cost, two.started_at, two.status, two.output_tokens) == ("", None, None, "ok", 7)


def test_a_misspelt_field_is_refused_and_nothing_is_written(workspace, owner):
    group = make_group(workspace, owner)
    round_ = _round(group, 1)

    with pytest.raises(ValueError, match="Output has no field variant"):
        copy_insert(Output, [{"round_id": round_.pk, "variant": group.variants.first().pk}])

    assert not round_.outputs.exists()


def test_a_field_set_on_save_is_refused_rather_than_left_empty(workspace):
    with pytest.raises(ValueError, match="CachedAnswer.created_at"):
        copy_insert(CachedAnswer, [{"workspace_id": workspace.pk, "key": "k", "text": "t", "finish_reason": "stop"}])


def test_json_arrives_whole_and_a_callable_default_is_called_for_each_row(workspace, owner):
    group = make_group(workspace, owner)
    now = datetime(2026, 12, 4, 23, 45, tzinfo=UTC)
    variables = {"q": 'tab\there, "quoted", back\\slash', "n": [1, 2.5, None]}

    copy_insert(
        Round,
        [
            {"group_id": group.pk, "number": 1, "variables": variables, "created_at": now},
            {"group_id": group.pk, "number": 2, "created_at": now},
        ],
    )

    one, two = group.rounds.order_by("number")
    assert (one.variables, two.variables, one.created_at) == (variables, {}, now)
    assert one.run_id != two.run_id  # uuid4, once a row, as Round(...) would call it


def _round_fields(round_: Round) -> dict:
    return {k: v for k, v in model_to_dict(round_).items() if k not in ("id", "number", "run_id")}


def test_copied_instances_are_the_rows_bulk_create_writes_with_their_ids(workspace, owner):
    group = make_group(workspace, owner)
    variables = {"q": 'tab\there, "quoted"', "n": [1, None]}

    def made(start: int) -> list[Round]:
        return [Round(group=group, number=start + i, variables=variables, created_by=owner) for i in range(3)]

    copied = copy_instances(Round, made(1))
    created = Round.objects.bulk_create(made(11))
    after = Round.objects.create(group=group, number=21, variables={})  # the sequence moved past the drawn ids

    assert [r.number for r in Round.objects.filter(pk__in=[r.pk for r in copied]).order_by("pk")] == [1, 2, 3]
    assert not any(r._state.adding for r in copied)
    for one, other in zip(copied, created, strict=True):
        stored = Round.objects.get(pk=one.pk)
        assert _round_fields(stored) == _round_fields(Round.objects.get(pk=other.pk))
        assert stored.created_at == one.created_at is not None  # auto_now_add taken as bulk_create takes it
    assert after.pk > max(r.pk for r in created)
