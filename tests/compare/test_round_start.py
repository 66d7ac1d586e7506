"""Starting rounds: repeat or one per dataset row, queued outputs for every variant, one task per committed round."""

from datetime import timedelta

import pytest
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from compare.datasets.services import dataset_create
from compare.models import OutputStatus, RoundStatus
from compare.rounds.jobs import ROUND
from compare.rounds.start import round_start
from lab.jobs.enqueue import send
from lab.jobs.kinds import kind
from lab.jobs.lifecycle import job_sweep
from tests.fixtures.compare_factories import make_group


@pytest.mark.django_db
def test_repeat_queues_numbered_rounds_each_with_one_queued_output_per_variant(group, owner):
    first = round_start(group=group, user=owner)
    rounds = round_start(group=group, user=owner, repeat=3)
    assert [r.number for r in [*first, *rounds]] == [1, 2, 3, 4]
    assert len({r.run_id for r in rounds}) == 1 and rounds[0].run_id != first[0].run_id
    for round_ in rounds:
        assert round_.status == RoundStatus.QUEUED
        assert round_.variables == {"topic": "tea"}
        outputs = round_.outputs.order_by("variant__position")
        assert [(o.variant.position, o.status) for o in outputs] == [(1, OutputStatus.QUEUED), (2, OutputStatus.QUEUED)]


@pytest.mark.django_db
@pytest.mark.parametrize("repeat", [0, 101])
def test_repeat_is_between_1_and_100(group, owner, repeat):
    with pytest.raises(ValidationError) as excinfo:
        round_start(group=group, user=owner, repeat=repeat)
    assert excinfo.value.message_dict == {"repeat": ["Repeat 1 to 100 times."]}


@pytest.mark.django_db
def test_a_dataset_run_starts_one_round_per_row_with_the_rows_variables(workspace, owner):
    dataset = dataset_create(
        workspace=workspace,
        user=owner,
        name="Readers",
        rows=[{"name": "kids", "vars": {"reader": "kids"}}, {"vars": {"reader": "cooks", "topic": "coffee"}}],
    )
    group = make_group(workspace, owner, prompts=["{{topic}} for {{reader}}"] * 2, dataset=dataset)
    rounds = round_start(group=group, user=owner, dataset=dataset)
    assert [(r.dataset_row.position, r.variables) for r in rounds] == [
        (1, {"topic": "tea", "reader": "kids"}),
        (2, {"topic": "coffee", "reader": "cooks"}),
    ]


@pytest.mark.django_db
def test_a_dataset_row_without_a_needed_variable_is_rejected_naming_row_and_variant(workspace, owner):
    full = dataset_create(workspace=workspace, user=owner, name="Full", rows=[{"vars": {"reader": "kids"}}])
    group = make_group(workspace, owner, prompts=["{{topic}} for {{reader}}"] * 2, dataset=full)
    dataset = dataset_create(
        workspace=workspace,
        user=owner,
        name="Half",
        rows=[{"vars": {"reader": "kids"}}, {"name": "bare", "vars": {"x": 1}}],
    )
    with pytest.raises(ValidationError) as excinfo:
        round_start(group=group, user=owner, dataset=dataset)
    messages = excinfo.value.message_dict["dataset"]
    assert messages[0].startswith("Row 2 (bare): Variant 1 (A) uses {{reader}}")
    assert group.rounds.count() == 0


@pytest.mark.django_db
def test_a_committed_start_enqueues_exactly_one_task_per_round(group, owner, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as callbacks:
        round_start(group=group, user=owner, repeat=2)
    assert [(c.func, c.args) for c in callbacks] == [(send, (ROUND, r.pk)) for r in group.rounds.order_by("number")]


@pytest.mark.django_db
def test_a_rolled_back_start_enqueues_nothing(group, owner, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks() as callbacks, pytest.raises(RuntimeError), transaction.atomic():
        round_start(group=group, user=owner)
        raise RuntimeError("something later in the same request failed")
    assert callbacks == []
    assert group.rounds.count() == 0


@pytest.mark.django_db
def test_rounds_the_caller_runs_itself_are_sent_to_no_worker_until_the_sweeper_finds_them_still_queued(
    group, owner, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks() as callbacks:
        rounds = round_start(group=group, user=owner, repeat=2, enqueue=False)
    assert callbacks == []
    # The caller stopped before it ran them: a worker takes them once they look lost.
    later = timezone.now() + timedelta(seconds=settings.JOBS_REQUEUE_AFTER_S + 1)
    with django_capture_on_commit_callbacks() as callbacks:
        assert sorted(job_sweep(kind(ROUND), now=later).requeued) == [r.pk for r in rounds]
    assert sorted((c.func.__name__, c.args) for c in callbacks) == [("send", (ROUND, r.pk)) for r in rounds]
