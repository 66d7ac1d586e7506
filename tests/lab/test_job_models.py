"""One job schema (lab.jobs.models.Job): every registered kind's model inherits its fields, its constraint and its
index, in the model and in the database, and moves status only by its transition table."""

import pytest
from django.db import IntegrityError, connection, transaction
from django.utils import timezone

from compare.models import Round, RoundStatus
from lab.jobs.kinds import registered
from lab.jobs.models import QUEUED, RUNNING, UNFINISHED, Job
from tests.fixtures.compare_factories import make_group, make_round

pytestmark = pytest.mark.django_db

SHARED_FIELDS = ("status", "enqueued_at", "started_at", "finished_at", "deadline", "claimed_by")
# The status strings stored in each kind's table: the schema's move changed none of them.
STORED_STATUSES = {
    "round": {"queued", "running", "done", "cancelled", "failed"},
    "verdict": {"queued", "running", "done", "failed"},
    "evaluation": {"queued", "running", "done", "failed", "skipped"},
    "assertion_grading": {"queued", "running", "done", "failed"},
}


def job_models() -> dict[str, type[Job]]:
    return {kind.name: kind.model for kind in registered()}


def test_every_kind_is_a_job_with_the_shared_fields():
    assert set(job_models()) == set(STORED_STATUSES)
    for name, model in job_models().items():
        assert issubclass(model, Job), name
        for field_name in SHARED_FIELDS:
            field, shared = model._meta.get_field(field_name), Job._meta.get_field(field_name)
            assert (type(field), field.null, field.max_length) == (type(shared), shared.null, shared.max_length)
        # Null until the job's message is first sent, for every kind (a verdict's used to default to now).
        assert model._meta.get_field("enqueued_at").default is not timezone.now, name
        assert {value for value, _ in model._meta.get_field("status").choices} == STORED_STATUSES[name]


def test_every_kind_has_a_transition_table_with_the_shared_moves():
    for name, model in job_models().items():
        assert model.transitions[RUNNING] == (QUEUED,), name
        assert "done" in model.transitions and model.transitions["done"] == (RUNNING,), name
        assert model.transitions["failed"] == UNFINISHED, name
        assert set(model.transitions) == STORED_STATUSES[name] - {QUEUED}, name


def test_every_kinds_table_has_the_running_has_deadline_check_and_the_sweepers_index():
    with connection.cursor() as cursor:
        for model in job_models().values():
            constraints = connection.introspection.get_constraints(cursor, model._meta.db_table)
            name = model._meta.model_name
            assert constraints[f"{name}_running_has_deadline"]["check"], name
            index = constraints[f"{name}_unfinished"]
            assert index["index"] and index["columns"] == ["status", "deadline", "enqueued_at"], name


def test_the_database_refuses_a_running_job_without_a_deadline(workspace, owner):
    round_ = make_round(make_group(workspace, owner))
    with pytest.raises(IntegrityError, match="round_running_has_deadline"), transaction.atomic():
        Round.objects.filter(pk=round_.pk).update(status=RoundStatus.RUNNING)


def test_transition_moves_only_from_the_statuses_the_table_allows(workspace, owner):
    round_ = make_round(make_group(workspace, owner))
    assert not Round.objects.transition(round_.pk, RoundStatus.DONE)  # a queued round was never claimed
    assert Round.objects.transition(round_.pk, RoundStatus.RUNNING, deadline=timezone.now())
    assert Round.objects.unfinished().filter(pk=round_.pk).exists()
    assert Round.objects.transition(round_.pk, RoundStatus.DONE, finished_at=timezone.now())
    assert not Round.objects.transition(round_.pk, RoundStatus.FAILED)  # finished: nothing moves it again
    assert Round.objects.finished().filter(pk=round_.pk).exists()
