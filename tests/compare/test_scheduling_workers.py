"""The connection scheduler across two real worker processes, against the fake server's own request log: never
more than `rpm` requests (retries included) or `tpm` tokens in any window, and no answer times out for waiting.

The window is SCHEDULER_WINDOW_S, shortened to a few seconds here: the same code as a minute in production."""

from concurrent.futures import ThreadPoolExecutor

import pytest

from compare.models import Output, OutputStatus
from lab.services import connection_create
from tests.compare.queued import run_on_queue
from tests.fixtures.compare_factories import make_group, make_round
from tests.fixtures.processes import start_worker

pytestmark = pytest.mark.services

WINDOW_S = 3.0


@pytest.fixture
def workers(transactional_db, tmp_path):
    with ThreadPoolExecutor() as starting:  # two workers start in parallel, saving seconds
        started = list(
            starting.map(
                lambda i: start_worker(
                    tmp_path, "-Q", "scheduling", name=f"scheduling{i}", SCHEDULER_WINDOW_S=str(WINDOW_S)
                ),
                range(2),
            )
        )
    yield started
    for worker in started:
        worker.stop()


def busiest(arrivals: list[float], window_s: float, weights: list[int] | None = None) -> int:
    """The most requests (or weighted: tokens) that arrived within any window of `window_s`."""
    pairs = sorted(zip(arrivals, weights or [1] * len(arrivals), strict=True))
    most = 0
    for i, (start, _) in enumerate(pairs):
        most = max(most, sum(weight for at, weight in pairs[i:] if at < start + window_s))
    return most


def batch(workspace, owner, model: str, rounds: int, **params) -> list:
    group = make_group(workspace, owner, models=[f"x::{model}"] * 5, mode="custom", params=params)
    return [make_round(group, lane="batch") for _ in range(rounds)]


def test_two_workers_never_send_more_than_rpm_requests_in_any_window_retries_included(
    workspace, owner, fake_llm, workers
):
    rpm = 20
    connection_create(
        workspace=workspace,
        name="x",
        kind="openai_compatible",
        base_url=fake_llm.openai_url,
        max_concurrency=4,
        rpm=rpm,
    )
    model = fake_llm.model(tokens=3, fault=429, fault_every=10, retry_after=0.2)  # a steady 10% of 429s
    rounds = batch(workspace, owner, model, rounds=12)

    run_on_queue(rounds, "scheduling", timeout=120)

    counters = fake_llm.scenario(model)
    assert counters["faults"] >= 5 and counters["requests"] == 60 + counters["faults"]  # every retry was sent
    assert busiest(counters["arrivals"], WINDOW_S) <= rpm
    statuses = Output.objects.filter(round__in=rounds).values_list("status", "error")
    assert {status for status, _ in statuses} == {OutputStatus.OK}, statuses  # none timed out for waiting
    assert all("Task compare.run_round[" in worker.output() for worker in workers), "both workers should run rounds"


def test_two_workers_keep_a_connections_tokens_per_minute_in_any_window(workspace, owner, fake_llm, workers):
    tpm = 60
    connection_create(
        workspace=workspace,
        name="x",
        kind="openai_compatible",
        base_url=fake_llm.openai_url,
        max_concurrency=8,
        rpm=10_000,
        tpm=tpm,
    )
    model = fake_llm.model(tokens=3)
    rounds = batch(workspace, owner, model, rounds=6, max_tokens=10)

    run_on_queue(rounds, "scheduling", timeout=120)

    outputs = list(Output.objects.filter(round__in=rounds))
    assert {output.status for output in outputs} == {OutputStatus.OK}
    spent = [output.input_tokens + output.output_tokens for output in outputs]
    counters = fake_llm.scenario(model)
    assert counters["requests"] == 30
    # Each request's tokens as the server counted them, at the time it arrived (all requests of one model are
    # alike, so the spend list pairs with the arrivals in any order).
    assert busiest(counters["arrivals"], WINDOW_S, spent) <= tpm
    assert sum(spent) > 2 * tpm  # the budget did hold something back: the run spanned several windows
