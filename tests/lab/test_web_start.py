"""The web process is ready when it starts: its first request imports nothing."""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

FIRST_REQUEST = """
import json, sys
import promptlab.asgi
from django.urls import resolve
loaded = set(sys.modules)
for path in ("/api/v1/groups/", "/api/v1/workspaces/1/leaderboard/", "/"):
    resolve(path)
print(json.dumps(sorted(set(sys.modules) - loaded)))
"""


def test_the_first_request_after_a_start_imports_no_view_module():
    # The URLconf imports the reports' statistics (SciPy): seconds of CPU that the first request after every
    # start would pay while the answers streaming at that moment waited.
    env = {**os.environ, "EMBEDDED_WORKER": "0", "DJANGO_SETTINGS_MODULE": "promptlab.settings"}
    done = subprocess.run(
        [sys.executable, "-c", FIRST_REQUEST], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    assert json.loads(done.stdout.splitlines()[-1]) == []
