"""A round started while the broker is down: the POST still answers (202, the round queued), and the round starts
within 30 s of the broker coming back, sent again by the next sweep (default settings). It uses a Redis of its
own, so stopping it disturbs no other test."""

import time

import httpx
import pytest

from compare.models import OutputStatus, Round, RoundStatus
from lab.tokens.services import api_token_create
from tests.fixtures.compare_factories import make_group
from tests.fixtures.processes import BIN, ManagedProcess, child_env, start_web, start_worker

pytestmark = [pytest.mark.services, pytest.mark.faults]


def test_a_round_started_while_the_broker_is_down_is_answered_and_runs_once_the_broker_is_back(
    transactional_db, workspace, owner, tmp_path, private_redis
):
    group = make_group(workspace, owner)
    token = api_token_create(user=owner, name="runs")[1]
    web = start_web(tmp_path, REDIS_URL=private_redis.url)
    processes = [web]
    try:
        private_redis.stop()

        response = httpx.post(
            f"{web.url}/api/v1/groups/{group.pk}/runs/",
            json={},
            headers={"Authorization": f"Token {token}"},
            timeout=30,
        )

        assert response.status_code == 202, response.text
        [queued] = response.json()["rounds"]
        assert queued["status"] == "queued"
        assert "Could not enqueue round" in web.output()
        round_ = Round.objects.get(pk=queued["id"])
        assert round_.status == RoundStatus.QUEUED

        private_redis.start()
        back = time.monotonic()
        env = {"REDIS_URL": private_redis.url}  # the default sweep interval: the promise is for a default install
        processes.append(start_worker(tmp_path, name="back", **env))
        beat = ManagedProcess(
            "beat",
            [str(BIN / "celery"), "-A", "promptlab", "beat", "--loglevel=INFO", "-s", str(tmp_path / "beat-schedule")],
            ready="beat: Starting",
            env=child_env(**env),
            log_dir=tmp_path,
        )
        processes.append(beat)
        beat.wait_ready()
        while time.monotonic() - back < 30:
            round_.refresh_from_db()
            if round_.is_finished:
                break
            time.sleep(0.2)
        assert round_.status == RoundStatus.DONE, processes[1].output()[-3000:]
        assert set(round_.outputs.values_list("status", flat=True)) == {OutputStatus.OK}
    finally:
        for process in processes:
            process.stop()
