"""Two lanes on a real worker process: a batch backlog of hundreds of calls waits on the engine loop, not on the
worker's threads, so interactive rounds still start at once — on another connection at once, on the same
connection at its next free slot, ahead of the queued batch calls — and every queued batch answer completes, since
waiting for a slot is not part of an answer's timeout.

The worker serves an interactive and a batch queue of its own (so no other test's worker takes these messages),
with four threads and far fewer batch rounds per process than the backlog has: the backlog fills the process and goes
back to its queue while interactive rounds pass. The rpm window is SCHEDULER_WINDOW_S, shortened to a second here.
"""

import time

import pytest

from compare.models import Output, OutputStatus, Round
from compare.tasks import run_round
from lab.services import connection_create
from tests.compare.queued import wait_for_round
from tests.fixtures.compare_factories import make_group, make_round
from tests.fixtures.processes import start_worker

pytestmark = pytest.mark.services

INTERACTIVE_QUEUE, BATCH_QUEUE = "lanes-interactive", "lanes-batch"
WINDOW_S = 1.0
RPM = 40  # requests in any one-second window on X
X_CONCURRENCY = 8
TIMEOUT_MS = 3000  # each answer's own timeout, from when its request is sent


@pytest.fixture
def worker(transactional_db, tmp_path):
    started = start_worker(
        tmp_path,
        "-Q",
        f"{INTERACTIVE_QUEUE},{BATCH_QUEUE}",
        "--concurrency=4",
        name="lanes",
        SCHEDULER_WINDOW_S=str(WINDOW_S),
        SCHEDULER_BATCH_JOBS_PER_PROCESS="8",  # far fewer than the backlog's 60 rounds
        SCHEDULER_BATCH_RESEND_S="0.5",
    )
    yield started
    started.stop()


@pytest.fixture
def x(workspace, fake_llm):
    return connection_create(
        workspace=workspace,
        name="x",
        kind="openai_compatible",
        base_url=fake_llm.openai_url,
        max_concurrency=X_CONCURRENCY,
        rpm=RPM,
    )


@pytest.fixture
def y(workspace, fake_llm):
    return connection_create(workspace=workspace, name="y", kind="openai_compatible", base_url=fake_llm.openai_url)


def backlog(workspace, owner, model: str, rounds: int, *, timeout_ms: int) -> list[Round]:
    """Batch rounds of five answers each on connection X, sent to the worker's batch queue."""
    group = make_group(workspace, owner, models=[f"x::{model}"] * 5, mode="custom", timeout_ms=timeout_ms)
    queued = [make_round(group, lane="batch") for _ in range(rounds)]
    for round_ in queued:
        run_round.apply_async((round_.pk,), queue=BATCH_QUEUE)
    return queued


def interactive(workspace, owner, connection: str, model: str) -> tuple[Round, float]:
    """A single round started from the page (the interactive lane), and when its message was sent."""
    group = make_group(workspace, owner, models=[f"{connection}::{model}"] * 2, mode="custom")
    round_ = make_round(group)
    sent_at = time.time()
    run_round.apply_async((round_.pk,), queue=INTERACTIVE_QUEUE)
    return round_, sent_at


def until(condition, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.05)


def wait_finished(rounds: list[Round], timeout: float) -> None:
    until(lambda: not Round.objects.filter(pk__in=[r.pk for r in rounds]).unfinished().exists(), timeout)


def batch_statuses(rounds: list[Round]) -> list[tuple[str, str]]:
    return list(Output.objects.filter(round__in=rounds).values_list("status", "error"))


def test_interactive_rounds_pass_a_batch_backlog_of_300_calls(workspace, owner, fake_llm, x, y, worker):
    batch_model = fake_llm.model(tokens=3, ttft_ms=20, fault=429, fault_every=10, retry_after=0.2)  # 10% 429s
    batch = backlog(workspace, owner, batch_model, rounds=60, timeout_ms=TIMEOUT_MS)
    until(lambda: fake_llm.scenario(batch_model)["requests"] >= 60, timeout=60)  # the backlog is under way

    # On another connection: as fast as its own answers.
    on_y, sent_at = interactive(workspace, owner, "y", fake_llm.model(tokens=3, ttft_ms=300))
    wait_for_round(on_y, timeout=30)
    on_y_outputs = list(on_y.outputs.order_by("variant__position"))
    assert {o.status for o in on_y_outputs} == {OutputStatus.OK}
    own_s = max(o.latency_ms for o in on_y_outputs) / 1000 + on_y.group.start_after_s(2)
    took_s = on_y.finished_at.timestamp() - sent_at
    print(
        "DEBUG claim",
        on_y.started_at.timestamp() - sent_at,
        [(o.started_at.timestamp() - sent_at, o.finished_at.timestamp() - sent_at, o.latency_ms) for o in on_y_outputs],
        took_s,
    )
    assert took_s <= own_s + 1.0, (took_s, own_s)

    # On the backlog's own connection: the next free slot of X, ahead of every batch call still queued.
    x_model = fake_llm.model(tokens=3)
    on_x, _ = interactive(workspace, owner, "x", x_model)
    wait_for_round(on_x, timeout=30)
    assert {o.status for o in on_x.outputs.all()} == {OutputStatus.OK}
    first_queued = min(o.started_at for o in on_x.outputs.all()).timestamp()  # when its first answer began waiting
    interactive_sent = min(fake_llm.scenario(x_model)["arrivals"])
    arrivals = fake_llm.scenario(batch_model)["arrivals"]
    meanwhile = [at for at in arrivals if first_queued < at < interactive_sent]
    still_queued = 300 - sum(1 for at in arrivals if at < interactive_sent)
    # Only calls that held a slot of X already may be sent before it (one first request or one retry each).
    assert len(meanwhile) <= X_CONCURRENCY, (len(meanwhile), still_queued)
    assert still_queued >= 50, "the batch should still have been queued when the interactive round came"

    wait_finished(batch, timeout=120)
    statuses = batch_statuses(batch)
    assert len(statuses) == 300 and {status for status, _ in statuses} == {OutputStatus.OK}, statuses
    assert fake_llm.scenario(batch_model)["faults"] >= 20  # the 429s were there, and retried
    received = sum("Task compare.run_round[" in line and "received" in line for line in worker.output().splitlines())
    assert received > 60 + 2, "a full process should have sent batch messages back to their queue"


def test_every_queued_batch_answer_completes_however_long_it_waited(workspace, owner, fake_llm, worker):
    connection_create(
        workspace=workspace, name="x", kind="openai_compatible", base_url=fake_llm.openai_url, max_concurrency=4, rpm=10
    )
    # Each answer may take 3 s once sent; the backlog keeps the last ones waiting for X longer than that.
    model = fake_llm.model(tokens=3)
    batch = backlog(workspace, owner, model, rounds=16, timeout_ms=TIMEOUT_MS)

    wait_finished(batch, timeout=120)

    outputs = list(Output.objects.filter(round__in=batch))
    assert len(outputs) == 80
    assert {o.status for o in outputs} == {OutputStatus.OK}, [o.error for o in outputs if o.error]
    # Waited for X: from when the call began to when its request was sent (its latency is the rest).
    waited = [(o.finished_at - o.started_at).total_seconds() - o.latency_ms / 1000 for o in outputs]
    assert max(waited) > TIMEOUT_MS / 1000, max(waited)  # longer than an answer's whole timeout, and it still came
