"""An experiment started as its page starts it, on two real worker processes: both claim its rounds, every answer
is recorded, and the connection is kept at its limit — the calls in flight at the fake server reach
`max_concurrency` and never pass it — although each process may run only two batch rounds at once that still wait
for their connection (its thread count), fewer than the limit needs."""

import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from compare.experiments.config import config_read
from compare.experiments.files import DirectoryFiles
from compare.experiments.services import experiment_create
from compare.models import OutputStatus, Round
from lab.models import WorkerProcess
from lab.services import connection_create
from tests.fixtures.processes import ROOT, child_env, redis_url, start_worker

pytestmark = pytest.mark.services

LIMIT = 20  # the connection's max_concurrency; two workers × two rounds × three calls would be 12
ROWS = 30  # × 3 prompts: 90 calls, four and a half waves at the limit

# The page's "Run" (compare/experiments/views.py experiment_run) once the experiment is saved: `experiment_start`
# without `run_here` sends one message per round to the batch queue when it commits. Run in a process of its own so
# that the messages go to this test's Redis database, where only its two workers listen (a session worker, if an
# earlier test started one, would take rounds too).
START = """
from compare.experiments.models import Experiment
from compare.experiments.services import experiment_start
experiment = Experiment.objects.get(pk={pk})
experiment_start(experiment=experiment, user=experiment.group.created_by)
"""


def own_redis_url() -> str:
    return redis_url(offset=2)


@pytest.fixture
def two_workers(transactional_db, tmp_path):
    with ThreadPoolExecutor() as starting:  # two workers start in parallel, saving seconds
        started = list(
            starting.map(lambda i: start_worker(tmp_path, name=f"spread{i}", REDIS_URL=own_redis_url()), range(2))
        )
    yield started
    for worker in started:
        worker.stop()


def experiment_file(folder, model: str):
    rows = "\n".join(f"  - {{name: r{i}, vars: {{n: {i}}}}}" for i in range(ROWS))
    path = folder / "spread.yaml"
    path.write_text(
        f"name: Spread\nmodels: [{{model: 'spread:{model}'}}]\n"
        "prompts: {a: 'Count to <<n>>.', b: 'Name <<n>> birds.', c: 'Spell <<n>>.'}\n"
        f"timeout: 30\ndataset:\n{rows}\n"
    )
    return path


def test_an_experiment_started_from_its_page_spreads_over_two_workers_at_the_connections_limit(
    workspace, owner, fake_llm, tmp_path, two_workers
):
    connection_create(
        workspace=workspace,
        name="spread",
        kind="openai_compatible",
        base_url=fake_llm.openai_url,
        max_concurrency=LIMIT,
        rpm=100_000,  # not the default 60 a minute: the connection's concurrency alone is under test
    )
    model = fake_llm.model(tokens=2, ttft_ms=1000)
    path = experiment_file(tmp_path, model)
    config = config_read(path.read_text(), source=str(path), files=DirectoryFiles(tmp_path), workspace=workspace)
    experiment = experiment_create(workspace=workspace, user=owner, config=config)

    subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", START.format(pk=experiment.pk)],
        cwd=ROOT,
        env=child_env(REDIS_URL=own_redis_url()),
        check=True,
        capture_output=True,
    )
    rounds = Round.objects.filter(group=experiment.group_id)
    deadline = time.monotonic() + 60
    while rounds.count() < ROWS or rounds.unfinished().exists():
        assert time.monotonic() < deadline, f"unfinished: {list(rounds.values_list('status', 'claimed_by'))}"
        time.sleep(0.1)

    outputs = [o for r in rounds for o in r.outputs.all()]
    assert len(outputs) == 3 * ROWS and all(o.status == OutputStatus.OK and o.text for o in outputs)
    claimants = set(rounds.values_list("claimed_by", flat=True))
    nodes = set(WorkerProcess.objects.filter(pk__in=claimants).values_list("node", flat=True))
    assert {node.split("@")[0] for node in nodes} == {worker.name for worker in two_workers}
    assert None not in claimants
    seen = fake_llm.scenario(model)
    assert seen["requests"] == 3 * ROWS  # each call made once
    assert seen["max_in_flight"] == LIMIT  # the two processes together fill the connection, and never overfill it
