"""Running an experiment here schedules calls, not dataset rows: by default the run keeps its connection at the
connection's own limit, however few variants a round has (--concurrency, an upper bound below that, is exercised
by the budget test of test_experiment_cli.py, which runs one call at a time)."""

import pytest

from compare.experiments.config import config_read
from compare.experiments.files import DirectoryFiles
from compare.experiments.runner import experiment_run_here
from compare.experiments.services import experiment_create, experiment_start
from compare.models import Output, OutputStatus
from lab.services import connection_create

pytestmark = pytest.mark.django_db(transaction=True)

LIMIT = 6
ONE_PROMPT = "{ask: 'Count to <<n>>.'}"
THREE_PROMPTS = "{first: 'One <<n>>.', second: 'Two <<n>>.', third: 'Three <<n>>.'}"


def run(
    workspace,
    owner,
    tmp_path,
    model: str,
    concurrency: int | None,
    rows: int = 12,
    *,
    prompts: str = ONE_PROMPT,
    connection: str = "wide",
) -> list[Output]:
    rows = "\n".join(f"  - {{name: r{i}, vars: {{n: {i}}}}}" for i in range(1, rows + 1))
    path = tmp_path / "experiment.yaml"
    path.write_text(f"models: [{{model: '{connection}:{model}'}}]\nprompts: {prompts}\ndataset:\n{rows}\n")
    config = config_read(path.read_text(), source=path.name, files=DirectoryFiles(tmp_path))
    experiment = experiment_create(workspace=workspace, user=owner, config=config)
    experiment_start(experiment=experiment, user=owner, run_here=True)
    experiment_run_here(experiment=experiment, concurrency=concurrency, on_progress=lambda progress: None)
    return list(Output.objects.filter(round__group=experiment.group))


@pytest.fixture
def wide(workspace, fake_llm):
    return connection_create(
        workspace=workspace, name="wide", kind="openai_compatible", base_url=fake_llm.openai_url, max_concurrency=LIMIT
    )


def test_by_default_a_run_of_one_variant_keeps_its_connection_at_its_limit(workspace, owner, fake_llm, wide, tmp_path):
    model = fake_llm.model(tokens=3, ttft_ms=400)  # slow enough that the rows overlap

    outputs = run(workspace, owner, tmp_path, model, concurrency=None)

    assert len(outputs) == 12 and {o.status for o in outputs} == {OutputStatus.OK}
    assert fake_llm.scenario(model)["max_in_flight"] == LIMIT  # six rows at once: the connection's limit, not 4


def test_at_a_low_concurrency_rounds_are_still_claimed_several_at_a_time(workspace, owner, fake_llm, wide, tmp_path):
    model = fake_llm.model(tokens=2, ttft_ms=30)

    outputs = run(workspace, owner, tmp_path, model, concurrency=2, rows=24)

    assert len(outputs) == 24 and {o.status for o in outputs} == {OutputStatus.OK}
    assert fake_llm.scenario(model)["max_in_flight"] == 2
    # The rounds of one claim share its start time. Two calls fit at once: the first claim takes those two, the
    # next the eight ahead, and each later one at least four (not one as each round is written): six claims at most.
    claims = {output.round.started_at for output in outputs}
    assert len(claims) <= 6, sorted(claims)


def test_with_concurrency_each_round_is_asked_whole_before_the_next(workspace, owner, fake_llm, wide, tmp_path):
    """A round is written, and makes room for the next claim, only once all its calls are done: so the calls go in
    the rounds' order, every variant of a round before the next round's, rather than the first variant of every
    round claimed first (which left every round half done when the calls in flight ran out)."""
    model = fake_llm.model(tokens=2, ttft_ms=100)

    run(workspace, owner, tmp_path, model, concurrency=3, rows=6, prompts=THREE_PROMPTS)

    asked = [int(body["messages"][-1]["content"].split()[-1].rstrip(".")) for body in fake_llm.requests(model)]
    waves = [sorted(asked[start : start + 3]) for start in range(0, len(asked), 3)]
    assert waves == [[row] * 3 for row in range(1, 7)]  # before: [1, 2, 3], [1, 2, 3], [3, 4, 5], …


def test_rounds_that_end_together_are_written_together(workspace, owner, fake_llm, tmp_path):
    """A wave's rounds end milliseconds apart; the write waits a little for them (compare.rounds.batches.GATHER_SHARE of
    the calls' latency), where it wrote most of them one by one as they came, a write each."""
    connection_create(
        workspace=workspace, name="many", kind="openai_compatible", base_url=fake_llm.openai_url, max_concurrency=20
    )
    model = fake_llm.model(tokens=2, ttft_ms=800)  # a wait of 0.1 s, against milliseconds between the rounds

    outputs = run(workspace, owner, tmp_path, model, concurrency=20, rows=20, prompts=THREE_PROMPTS, connection="many")

    assert len(outputs) == 60 and {o.status for o in outputs} == {OutputStatus.OK}
    writes = {output.finished_at for output in outputs}  # one write stamps all its answers with its time
    # Three waves of about seven rounds, a write each (two spare for a wave a busy host splits); without the wait,
    # twelve or thirteen writes.
    assert len(writes) <= 5, sorted(writes)


def test_at_a_low_concurrency_rounds_that_end_one_by_one_are_still_written_several_at_a_time(
    workspace, owner, fake_llm, wide, tmp_path
):
    """With two calls at once each round ends alone; a write waits for as many rounds as a claim takes (four: half
    of the rounds claimed ahead), where the short wait for rounds about to end wrote them one or two at a time."""
    # The write waits for them at most a few latencies: 0.1 s answers leave that wait room on a loaded host, where
    # 30 ms answers gave 8 to 13 writes with both cores busy.
    model = fake_llm.model(tokens=2, ttft_ms=100)

    outputs = run(workspace, owner, tmp_path, model, concurrency=2, rows=24)

    assert len(outputs) == 24 and {o.status for o in outputs} == {OutputStatus.OK}
    assert fake_llm.scenario(model)["max_in_flight"] == 2
    writes = {output.finished_at for output in outputs}  # one write stamps all its answers with its time
    assert len(writes) <= 7, sorted(writes)  # six of four, and one spare for the last rounds
