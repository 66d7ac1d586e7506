"""The settings page's "Worker: last seen" reads the workers' heartbeats, not only the last manual check: a lab whose
(embedded or separate) worker ran rounds never says "never"."""

from datetime import timedelta

from django.urls import reverse
from django.utils import timezone

from lab.models import WorkerProcess


def settings_page(client, owner, workspace) -> str:
    client.force_login(owner)
    return client.get(reverse("lab:settings", args=[workspace.pk])).content.decode()


def test_a_worker_that_ran_is_last_seen_at_its_heartbeat(client, owner, workspace):
    seen = timezone.now() - timedelta(minutes=3)
    WorkerProcess.objects.create(node="embedded@web", pid=1, started_at=seen, seen_at=seen, beating_since=seen)

    page = settings_page(client, owner, workspace)

    assert 'id="worker-seen">never<' not in page
    assert "No worker is running." in page  # three minutes of silence: gone


def test_with_no_worker_ever_the_page_says_never(client, owner, workspace):
    assert 'id="worker-seen">never<' in settings_page(client, owner, workspace)


def test_a_live_worker_is_running(client, owner, workspace):
    now = timezone.now()
    WorkerProcess.objects.create(node="worker@host", pid=2, started_at=now, seen_at=now, beating_since=now)

    assert "A worker is running." in settings_page(client, owner, workspace)
