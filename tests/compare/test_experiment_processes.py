"""`manage.py experiment run --processes N` spreads one run over real processes: every round runs exactly once and
every answer is recorded, the connection's limits and --concurrency hold for the run as a whole, a child killed
mid-run leaves nothing queued and nothing running past its deadline, and bad values say what is wrong."""

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from django.utils import timezone

from compare.experiments.runner import CLAIM_AHEAD, MIN_AHEAD
from compare.models import CompareGroup, OutputStatus, Round, RoundStatus
from compare.rounds.worker import ROUND_WORKER_STOPPED, WORKER_STOPPED
from lab.jobs.lifecycle import jobs_sweep
from lab.services import connection_create
from tests.fixtures.experiments import run_command
from tests.fixtures.processes import ROOT, child_env, redis_url

pytestmark = pytest.mark.django_db(transaction=True)

SHARE = "run-share"  # the hidden action a child process runs


def experiment_file(folder: Path, model: str, rows: int, timeout_s: int = 30) -> Path:
    dataset = "\n".join(f"  - {{name: r{i}, vars: {{n: {i}}}}}" for i in range(1, rows + 1))
    path = folder / "spread.yaml"
    path.write_text(
        f"models: [{{model: 'spread:{model}'}}]\nprompts: {{ask: 'Count to <<n>>.'}}\ntimeout: {timeout_s}\n"
        f"dataset:\n{dataset}\n"
    )
    return path


def own_redis_url() -> str:
    """The test Redis server, in a database next to the tests' own. The session's Celery worker (if an earlier test
    started it) listens on the tests' database and would take rounds of the run too: the limits asserted here are
    the command's processes' alone."""
    return redis_url(offset=1)


def start(path: Path, *args: str, **env: str) -> subprocess.Popen:
    command = [sys.executable, "manage.py", "experiment", "run", str(path), *args]
    env.setdefault("REDIS_URL", own_redis_url())
    return subprocess.Popen(
        command, cwd=ROOT, env=child_env(**env), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def children_running_a_share(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            parent = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            command = (entry / "cmdline").read_bytes().split(b"\0")
        except (OSError, IndexError, ValueError):
            continue
        if parent == pid and SHARE.encode() in command:
            found.append(int(entry.name))
    return found


def running_rounds() -> int:
    return Round.objects.filter(status=RoundStatus.RUNNING).count()


def wait_until(condition, timeout_s: float = 60.0):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if found := condition():
            return found
        time.sleep(0.1)
    pytest.fail("timed out waiting")


def limited(workspace, fake_llm, limit: int):
    return connection_create(
        workspace=workspace,
        name="spread",
        kind="openai_compatible",
        base_url=fake_llm.openai_url,
        max_concurrency=limit,
    )


def test_a_run_over_two_processes_runs_every_round_once_within_the_connections_limit(workspace, fake_llm, tmp_path):
    # Each process's window is its part of the limit of 3 (two calls and one), held together by the scheduler shared
    # through Redis: only the two processes together reach 3.
    limited(workspace, fake_llm, limit=3)
    model = fake_llm.model(tokens=3, ttft_ms=1000)  # slow enough that the child, however slow to start, has work
    command = start(experiment_file(tmp_path, model, rows=30), "--processes", "2")
    assert wait_until(lambda: children_running_a_share(command.pid) or command.poll() is not None)
    out, err = command.communicate(timeout=120)
    assert command.returncode == 0, err
    assert "each connection at its limit, over 2 processes" in out
    assert "Done: 30 answers, 0 failed" in out
    rounds = CompareGroup.objects.get().rounds.all()
    assert [r.status for r in rounds] == [RoundStatus.DONE] * 30
    outputs = [o for r in rounds for o in r.outputs.all()]
    assert all(o.status == OutputStatus.OK and o.text for o in outputs) and len(outputs) == 30
    seen = fake_llm.scenario(model)
    assert seen["requests"] == 30  # every call made exactly once, by one process or the other
    assert seen["max_in_flight"] == 3


def test_concurrency_bounds_the_calls_in_flight_of_all_processes_together(workspace, fake_llm, tmp_path):
    limited(workspace, fake_llm, limit=20)
    model = fake_llm.model(tokens=3, ttft_ms=1000)
    command = start(experiment_file(tmp_path, model, rows=30), "--processes", "2", "--concurrency", "3")
    out, err = command.communicate(timeout=120)

    assert command.returncode == 0, err
    assert "up to 3 calls at once, over 2 processes" in out
    seen = fake_llm.scenario(model)
    assert seen["requests"] == 30
    assert seen["max_in_flight"] == 3  # two calls in one process, one in the other: never 3 in each


def test_a_killed_child_leaves_no_round_queued_and_none_running_past_its_deadline(workspace, fake_llm, tmp_path):
    limited(workspace, fake_llm, limit=4)  # two rounds at once in each process, and those claimed ahead
    parent_room = 2 + max(2 * (CLAIM_AHEAD - 1), MIN_AHEAD)
    # Slow enough for the child to start before the parent is done with its share, quick enough that the last round
    # a process claimed ahead (its fifth wave of two) ends within its time limit (6.5 s: the deadlines below).
    model = fake_llm.model(tokens=2, ttft_ms=1000)
    # A short queue deadline, so that a claimed round's deadline comes within seconds.
    short = {"SCHEDULER_BATCH_QUEUE_DEADLINE_S": "2", "JOBS_GRACE_S": "1"}
    command = start(experiment_file(tmp_path, model, rows=24, timeout_s=4), "--processes", "2", **short)
    (child,) = wait_until(lambda: children_running_a_share(command.pid))
    # More rounds running than the parent has room for, and still so a moment later: the child holds some.
    wait_until(lambda: running_rounds() > parent_room and (time.sleep(0.3) or running_rounds() > parent_room))
    subprocess.run(["kill", "-KILL", str(child)], check=True)
    out, err = command.communicate(timeout=120)

    assert command.returncode == 1, err
    assert "Process 2 of 2 stopped (killed by SIGKILL) before its share of the run was done." in err
    assert "Some calls did not finish: 24 answers, 0 failed" in err
    assert not Round.objects.filter(status=RoundStatus.QUEUED).exists()  # the parent ran what the child had not taken
    orphans = list(Round.objects.filter(status=RoundStatus.RUNNING))
    assert orphans  # the child's claimed rounds: the jobs sweeper ends them at their deadline
    wait_until(lambda: timezone.now() > max(r.deadline for r in orphans), timeout_s=30)
    jobs_sweep()
    for orphan in orphans:
        orphan.refresh_from_db()
        assert orphan.status == RoundStatus.FAILED and orphan.error == ROUND_WORKER_STOPPED
        assert [o.error for o in orphan.outputs.all()] == [WORKER_STOPPED]
    done = Round.objects.exclude(pk__in=[r.pk for r in orphans])
    assert {r.status for r in done} == {RoundStatus.DONE}
    assert all(o.status == OutputStatus.OK for r in done for o in r.outputs.all())


def test_ctrl_c_in_the_parent_stops_its_children(workspace, fake_llm, tmp_path):
    limited(workspace, fake_llm, limit=2)
    model = fake_llm.model(tokens=2, ttft_ms=1000)
    command = start(experiment_file(tmp_path, model, rows=30), "--processes", "2")
    (child,) = wait_until(lambda: children_running_a_share(command.pid))
    wait_until(lambda: Round.objects.filter(status=RoundStatus.RUNNING).count() >= 2)

    command.send_signal(signal.SIGINT)  # to the parent alone, not to the whole process group as a terminal does
    command.communicate(timeout=60)

    assert command.returncode != 0
    assert not Path(f"/proc/{child}").exists()  # stopped, and reaped by the parent before it exited
    assert Round.objects.filter(status=RoundStatus.QUEUED).exists()  # the rest of the run was not made


@pytest.mark.parametrize("value", ["0", "two", "-1"])
def test_a_number_of_processes_that_is_not_a_whole_number_above_zero_is_refused(workspace, tmp_path, value):
    ran = run_command("run", str(experiment_file(tmp_path, "fake", rows=1)), "--processes", value)
    assert ran.code != 0
    assert f"argument --processes: {value!r} is not a number of processes (a whole number, at least 1)." in ran.err
    assert not CompareGroup.objects.exists()


def test_more_than_one_process_needs_redis_to_share_the_connections_limits(workspace, tmp_path, settings):
    settings.REDIS_URL = ""  # embedded mode: each process would keep the limits in its own memory

    ran = run_command("run", str(experiment_file(tmp_path, "fake", rows=1)), "--processes", "2")

    assert ran.code == 2
    assert "--processes 2 needs REDIS_URL: the connections' limits are shared between processes" in ran.err
    assert not CompareGroup.objects.exists()
