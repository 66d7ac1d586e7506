"""A connection's limit holds across worker processes: the provider never sees more requests at once than allowed."""

from concurrent.futures import ThreadPoolExecutor

import pytest

from compare.models import OutputStatus, Round, RoundStatus
from lab.services import connection_create
from tests.compare.queued import run_on_queue
from tests.fixtures.compare_factories import make_group, make_round
from tests.fixtures.processes import start_worker

pytestmark = pytest.mark.services


def test_two_workers_never_send_more_than_the_connections_limit_at_once(
    transactional_db, workspace, owner, fake_llm, tmp_path
):
    connection_create(
        workspace=workspace, name="fake", kind="openai_compatible", base_url=fake_llm.openai_url, max_concurrency=3
    )
    model = fake_llm.model(tokens=5, ttft_ms=150)  # one scenario, so the server counts every request together
    group = make_group(workspace, owner, models=[f"fake::{model}"] * 5, mode="custom")
    rounds = [make_round(group) for _ in range(4)]
    with ThreadPoolExecutor() as starting:  # two workers start in parallel, saving seconds
        workers = list(starting.map(lambda i: start_worker(tmp_path, "-Q", "limits", name=f"limits{i}"), range(2)))
    try:
        run_on_queue(rounds, "limits")
    finally:
        for worker in workers:
            worker.stop()

    counters = fake_llm.scenario(model)
    assert counters["requests"] == 20
    assert counters["max_in_flight"] == 3
    assert set(Round.objects.filter(pk__in=[r.pk for r in rounds]).values_list("status", flat=True)) == {
        RoundStatus.DONE
    }
    assert set(group.variants.values_list("outputs__status", flat=True)) == {OutputStatus.OK}
    assert all("Task compare.run_round[" in worker.output() for worker in workers), "both workers should run rounds"
