"""manage.py starts with the collector off (lab.gc_tuning) and every command finds it on again, start-up frozen."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_a_command_runs_with_the_collector_on_and_start_up_frozen():
    code = "import gc; print(gc.isenabled(), gc.get_freeze_count() > 50_000, gc.get_threshold()[0])"
    done = subprocess.run(
        [sys.executable, "manage.py", "shell", "--no-imports", "-c", code],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True", "700"]
