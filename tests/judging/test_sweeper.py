"""The verdict sweeper: a dead worker's verdict fails readably, a lost message is re-sent, nothing waits forever."""

from datetime import timedelta

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.utils import timezone

from judging import services
from judging.jobs import WORKER_STOPPED
from judging.models import VERDICT_JOB, Verdict, VerdictStatus
from lab.jobs.enqueue import send
from lab.jobs.kinds import kind
from lab.jobs.lifecycle import job_sweep
from lab.models import WorkerProcess
from lab.realtime import group_channel
from tests.fixtures.judging_factories import answered_round, judged_group, make_judge

pytestmark = pytest.mark.django_db


def verdicts_sweep(now):
    return job_sweep(kind(VERDICT_JOB), now=now)


@pytest.fixture
def verdict(workspace, owner, connections, fake_llm):
    judge, _ = make_judge(workspace, owner, fake_llm)
    round_ = answered_round(judged_group(workspace, owner), owner, ["one", "two", "three"])
    return services.verdict_request(round=round_, user=owner, judge=judge)


def test_a_running_verdict_past_its_deadline_fails_with_a_readable_error(verdict, django_capture_on_commit_callbacks):
    now = timezone.now()
    Verdict.objects.filter(pk=verdict.pk).update(
        status=VerdictStatus.RUNNING, started_at=now - timedelta(minutes=10), deadline=now - timedelta(seconds=1)
    )
    layer = get_channel_layer()
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(group_channel(verdict.round.group_id), channel)

    with django_capture_on_commit_callbacks(execute=True):
        report = verdicts_sweep(now=now)

    verdict.refresh_from_db()
    assert report.failed == [verdict.pk]
    assert verdict.status == VerdictStatus.FAILED
    assert verdict.error == WORKER_STOPPED
    event = async_to_sync(layer.receive)(channel)["event"]
    assert event["type"] == "verdict.done"
    assert event["status"] == "failed"


def test_a_running_verdict_within_its_deadline_is_left_alone(verdict):
    now = timezone.now()
    Verdict.objects.filter(pk=verdict.pk).update(status=VerdictStatus.RUNNING, deadline=now + timedelta(minutes=5))
    assert verdicts_sweep(now=now).failed == []
    verdict.refresh_from_db()
    assert verdict.status == VerdictStatus.RUNNING


def test_a_queued_verdict_whose_message_seems_lost_is_sent_again_once_per_grace_period(verdict, settings):
    later = timezone.now() + timedelta(seconds=settings.JOBS_REQUEUE_AFTER_S + 1)
    assert verdicts_sweep(now=later).requeued == [verdict.pk]
    assert verdicts_sweep(now=later).requeued == []  # just re-sent: not again on the next sweep
    verdict.refresh_from_db()
    assert verdict.status == VerdictStatus.QUEUED
    assert verdict.enqueued_at == later


def test_a_verdict_nobody_picked_up_for_an_hour_fails_and_says_why(verdict, settings):
    much_later = timezone.now() + timedelta(seconds=settings.JOBS_QUEUE_EXPIRY_S + 1)
    report = verdicts_sweep(now=much_later)
    verdict.refresh_from_db()
    assert report.expired == [verdict.pk]
    assert verdict.status == VerdictStatus.FAILED
    assert "is a worker running?" in verdict.error


def test_a_running_verdict_whose_worker_is_gone_is_sent_again_while_a_worker_lives(
    verdict, settings, django_capture_on_commit_callbacks
):
    now = timezone.now()
    lost = now - timedelta(seconds=settings.JOBS_WORKER_LOST_AFTER_S + 1)
    gone = WorkerProcess.objects.create(node="gone@here", pid=1, started_at=lost, seen_at=lost)
    WorkerProcess.objects.create(node="live@here", pid=2, started_at=lost, seen_at=now, beating_since=lost)
    Verdict.objects.filter(pk=verdict.pk).update(
        status=VerdictStatus.RUNNING, claimed_by=gone.pk, deadline=now + timedelta(minutes=5)
    )
    with django_capture_on_commit_callbacks() as callbacks:
        assert verdicts_sweep(now=now).reclaimed == [verdict.pk]
    assert [(c.func, c.args) for c in callbacks] == [(send, (VERDICT_JOB, verdict.pk))]
    verdict.refresh_from_db()
    assert (verdict.status, verdict.claimed_by, verdict.deadline) == (VerdictStatus.QUEUED, None, None)
