"""The jobs' timings are JOBS_* settings (they govern rounds, verdicts and evaluations alike); a deployment whose
environment still names them COMPARE_* keeps its values. Read in a fresh interpreter, as a deployment would."""

import json
import os
import subprocess
import sys

READ = (
    "import json, django; django.setup(); from django.conf import settings as s; print(json.dumps({"
    "'grace': s.JOBS_GRACE_S, 'sweep': s.JOBS_SWEEP_INTERVAL_S, 'requeue': s.JOBS_REQUEUE_AFTER_S, "
    "'expiry': s.JOBS_QUEUE_EXPIRY_S}))"
)


def settings_with(**variables) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("JOBS_", "COMPARE_"))}
    env.update(DJANGO_SETTINGS_MODULE="promptlab.settings", EMBEDDED_WORKER="0", **variables)
    out = subprocess.run([sys.executable, "-c", READ], env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_the_defaults_and_the_jobs_names():
    assert settings_with() == {"grace": 15, "sweep": 10, "requeue": 120, "expiry": 3600}
    read = settings_with(
        JOBS_GRACE_S="7", JOBS_SWEEP_INTERVAL_S="3", JOBS_REQUEUE_AFTER_S="30", JOBS_QUEUE_EXPIRY_S="60"
    )
    assert read == {"grace": 7, "sweep": 3, "requeue": 30, "expiry": 60}


def test_the_former_compare_names_are_still_read_and_the_new_ones_win():
    old = {"COMPARE_ROUND_GRACE_S": "8", "COMPARE_SWEEP_INTERVAL_S": "4", "COMPARE_REQUEUE_AFTER_S": "40"}
    assert settings_with(**old, COMPARE_QUEUE_EXPIRY_S="90") == {"grace": 8, "sweep": 4, "requeue": 40, "expiry": 90}
    assert settings_with(**old, JOBS_GRACE_S="9")["grace"] == 9
