"""manage.py starts with the collector off (lab.gc_tuning) and every command finds it on again, start-up frozen;
httpx's command-line client is never imported."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def manage_py_shell(code: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", "shell", "--no-imports", "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_a_command_runs_with_the_collector_on_and_start_up_frozen():
    done = manage_py_shell("import gc; print(gc.isenabled(), gc.get_freeze_count() > 50_000, gc.get_threshold()[0])")

    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True", "700"]


def test_a_command_has_httpx_without_its_command_line_client():
    # rich, click and Pygments are installed here (a test tool's and Celery's), so httpx would import its client.
    code = (
        "import sys, httpx; cli = sys.modules['httpx._main']; "
        "print(httpx.Client.__name__, 'rich' in sys.modules, hasattr(cli, 'main'))"
    )
    done = manage_py_shell(code)

    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["Client", "False", "False"]
