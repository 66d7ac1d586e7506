"""The two ways to start the lab: embedded (as `make run` does) and production settings passing check --deploy."""

import asyncio
import json
import os
import re
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import httpx
import websockets
from cryptography.fernet import Fernet

from tests.fixtures.processes import ManagedProcess, free_port

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
SERVICE_VARS = ("DATABASE_URL", "REDIS_URL")


def embedded_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in (*SERVICE_VARS, "DJANGO_ALLOW_ASYNC_UNSAFE")}
    env.update({"SQLITE_PATH": str(tmp_path / "lab.sqlite3"), "EMBEDDED_WORKER": "1", "DEBUG": "1"})
    return env


def test_embedded_mode_serves_the_lab_with_sqlite_and_no_redis(tmp_path):
    env = embedded_env(tmp_path)
    manage = [sys.executable, "manage.py"]
    subprocess.run([*manage, "migrate", "--noinput"], cwd=ROOT, env=env, check=True, capture_output=True)
    demo = subprocess.run([*manage, "demo_setup"], cwd=ROOT, env=env, check=True, capture_output=True, text=True)
    username, password = re.search(r"as (\S+) / (\S+)", demo.stdout).groups()
    port = free_port()
    web = ManagedProcess(
        "embedded",
        [str(BIN / "daphne"), "-b", "127.0.0.1", "-p", str(port), "promptlab.asgi:application"],
        ready="Listening on TCP address",
        env=env,
        log_dir=tmp_path,
    )
    web.wait_ready()
    base = f"http://127.0.0.1:{port}"
    try:
        with httpx.Client(base_url=base) as client:
            client.get("/login/")
            login = client.post(
                "/login/",
                data={"username": username, "password": password, "csrfmiddlewaretoken": client.cookies["csrftoken"]},
            )
            assert login.status_code == 302
            home = client.get("/", follow_redirects=True)
            assert home.status_code == 200
            assert "Prompt Lab" in home.text
            schema = client.get("/api/schema/")
            assert schema.status_code == 200
            assert "/api/v1/workspaces/" in schema.text
            workspace_id = client.get("/api/v1/workspaces/").json()["results"][0]["id"]
            event = asyncio.run(_worker_pong(base, client, workspace_id))
            assert event["type"] == "worker.pong"
            events = asyncio.run(_streamed_round(base, client, workspace_id))
            types = [e["type"] for e in events]
            assert "output.delta" in types
            assert types.count("output.done") == 2
            assert types[-1] == "round.done"
        assert "Embedded Celery worker and beat started" in web.output()
        # The in-process worker is recorded with its heartbeat, and the round says it claimed it (lab/jobs/workers.py).
        with closing(sqlite3.connect(tmp_path / "lab.sqlite3")) as db:
            [(worker_id,)] = db.execute("SELECT id FROM lab_workerprocess WHERE stopped_at IS NULL").fetchall()
            [(claimed_by,)] = db.execute("SELECT claimed_by FROM compare_round ORDER BY id DESC LIMIT 1").fetchall()
        assert claimed_by == worker_id
    finally:
        web.stop()


async def _worker_pong(base: str, client: httpx.Client, workspace_id: int) -> dict:
    """The in-process worker runs a task and its event reaches a socket through the in-memory layer."""
    url = base.replace("http://", "ws://") + f"/ws/workspaces/{workspace_id}/"
    headers = {"Cookie": f"sessionid={client.cookies['sessionid']}", "Origin": base}
    async with websockets.connect(url, additional_headers=headers) as socket:
        queued = await asyncio.to_thread(
            client.post,
            f"/api/v1/workspaces/{workspace_id}/worker-check/",
            headers={"X-CSRFToken": client.cookies["csrftoken"], "Referer": base},
        )
        assert queued.status_code == 202
        async with asyncio.timeout(20):
            while True:
                event = json.loads(await socket.recv())
                if event["type"] == "worker.pong":
                    return event


async def _streamed_round(base: str, client: httpx.Client, workspace_id: int) -> list[dict]:
    """A real round in embedded mode: the worker thread streams deltas to a socket through the in-memory layer."""
    headers = {"X-CSRFToken": client.cookies["csrftoken"], "Referer": base}
    model = "simulated::writer?ttft_ms=50&token_ms=5&tokens=30"
    group = await asyncio.to_thread(
        client.post,
        "/api/v1/groups/",
        json={
            "workspace": workspace_id,
            "title": "Embedded smoke",
            "mode": "prompts",
            "variants": [
                {"label": "v1", "model": model, "prompt": "Hi"},
                {"label": "v2", "model": model, "prompt": "Yo"},
            ],
        },
        headers=headers,
    )
    assert group.status_code == 201, group.text
    group_id = group.json()["id"]
    url = base.replace("http://", "ws://") + f"/ws/groups/{group_id}/"
    socket_headers = {"Cookie": f"sessionid={client.cookies['sessionid']}", "Origin": base}
    events = []
    async with websockets.connect(url, additional_headers=socket_headers) as socket:
        started = await asyncio.to_thread(client.post, f"/api/v1/groups/{group_id}/runs/", json={}, headers=headers)
        assert started.status_code == 202, started.text
        async with asyncio.timeout(30):
            while not events or events[-1]["type"] != "round.done":
                events.append(json.loads(await socket.recv()))
    return events


def test_production_settings_pass_check_deploy():
    env = {k: v for k, v in os.environ.items() if k not in ("DEBUG", "DJANGO_ALLOW_ASYNC_UNSAFE")}
    env.update(
        {
            "DEBUG": "0",
            "SECRET_KEY": "x9!kq2-prod-like-secret-key-with-enough-length-and-entropy-0193847561",
            "ALLOWED_HOSTS": "lab.example.com",
            "FIELD_ENCRYPTION_KEYS": Fernet.generate_key().decode(),
        }
    )
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_production_refuses_to_start_without_a_secret_key():
    env = {k: v for k, v in os.environ.items() if k != "SECRET_KEY"}
    env["DEBUG"] = "0"
    result = subprocess.run([sys.executable, "manage.py", "check"], cwd=ROOT, env=env, capture_output=True, text=True)
    assert result.returncode != 0
    assert "SECRET_KEY must be set" in result.stderr
