"""The vote-counting SQL is written once (voting/vote_count_sql.py): migration 0007 installs it as it was written,
and on SQLite, as on Postgres, the counts its triggers keep agree with its recount."""

import hashlib
import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

from voting import vote_count_sql

ROOT = Path(__file__).resolve().parents[2]
# What migration 0007 installs. A changed rule needs statements of its own and a migration of its own (see the
# module's docstring); never an edit of these, which would make 0007 install something else from then on.
INSTALLED_BY_0007 = "7067ebbe7475decfe2a93031756dd7322d9b7b10722d5f401ab598fe7325aa9c"


def installed_sql() -> str:
    sql = vote_count_sql
    return json.dumps(
        {
            "postgres": [*sql.POSTGRES_TRIGGERS, *sql.POSTGRES_DROP],
            "sqlite": [*sql.SQLITE_TRIGGERS, *sql.SQLITE_DROP],
            "fill": sql.FILL,
            "day": sql.DAY,
        },
        sort_keys=True,
    )


def test_the_sql_migration_0007_installs_is_unchanged():
    assert hashlib.sha256(installed_sql().encode()).hexdigest() == INSTALLED_BY_0007


def test_migration_0007_installs_the_modules_statements():
    migration = importlib.import_module("voting.migrations.0007_vote_counts_kept")

    assert migration.POSTGRES_TRIGGERS is vote_count_sql.POSTGRES_TRIGGERS
    assert migration.SQLITE_TRIGGERS is vote_count_sql.SQLITE_TRIGGERS
    assert migration.FILL is vote_count_sql.FILL


def test_on_sqlite_the_counts_the_triggers_keep_agree_with_the_recount(tmp_path):
    # Embedded mode: migrate (the triggers), the demo's votes (counted by them), then the check command's recount.
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL", "DJANGO_ALLOW_ASYNC_UNSAFE")}
    env["SQLITE_PATH"] = str(tmp_path / "lab.sqlite3")
    manage = [sys.executable, "manage.py"]
    for command in (["migrate", "--noinput"], ["demo_setup"]):
        subprocess.run([*manage, *command], cwd=ROOT, env=env, check=True, capture_output=True)

    check = subprocess.run([*manage, "vote_counts_check"], cwd=ROOT, env=env, capture_output=True, text=True)

    assert check.returncode == 0, check.stdout + check.stderr
    assert "The vote counts agree with the votes." in check.stdout
