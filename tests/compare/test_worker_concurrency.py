"""How a worker runs rounds: its task threads share the process's engine loop (many rounds at once per process); a
prefork worker, still supported, runs one loop per child."""

import pytest

from compare.models import OutputStatus, Round, RoundStatus
from lab.services import connection_create
from tests.compare.queued import run_on_queue
from tests.fixtures.compare_factories import make_group, make_round
from tests.fixtures.processes import start_worker

pytestmark = pytest.mark.services


def test_one_worker_process_streams_four_rounds_at_once(transactional_db, workspace, owner, fake_llm, tmp_path):
    connection_create(
        workspace=workspace, name="fake", kind="openai_compatible", base_url=fake_llm.openai_url, max_concurrency=20
    )
    model = fake_llm.model(tokens=3, ttft_ms=1500)  # slow enough that all four rounds overlap
    group = make_group(workspace, owner, models=[f"fake::{model}"] * 2, mode="custom")
    rounds = [make_round(group) for _ in range(4)]
    worker = start_worker(tmp_path, "-Q", "together", "--concurrency=4", name="together")
    try:
        run_on_queue(rounds, "together")
    finally:
        worker.stop()

    assert "(thread)" in worker.output(), "the worker should run its tasks on threads, in one process"
    assert fake_llm.scenario(model)["max_in_flight"] == 8  # every answer of the four rounds at once
    assert set(Round.objects.filter(pk__in=[r.pk for r in rounds]).values_list("status", flat=True)) == {
        RoundStatus.DONE
    }
    assert set(group.variants.values_list("outputs__status", flat=True)) == {OutputStatus.OK}


def test_a_prefork_worker_runs_rounds_on_one_loop_per_child(transactional_db, workspace, owner, fake_llm, tmp_path):
    connection_create(workspace=workspace, name="fake", kind="openai_compatible", base_url=fake_llm.openai_url)
    group = make_group(workspace, owner, models=[f"fake::{fake_llm.model(tokens=3)}"] * 2, mode="custom")
    rounds = [make_round(group) for _ in range(2)]
    worker = start_worker(tmp_path, "-Q", "forked", name="forked", CELERY_WORKER_POOL="prefork")
    try:
        run_on_queue(rounds, "forked")
    finally:
        worker.stop()

    assert "(prefork)" in worker.output()
    assert set(Round.objects.filter(pk__in=[r.pk for r in rounds]).values_list("status", flat=True)) == {
        RoundStatus.DONE
    }
    assert set(group.variants.values_list("outputs__status", flat=True)) == {OutputStatus.OK}
