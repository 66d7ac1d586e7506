"""Redis down: people still sign in (form and token endpoint), the password limits still hold (they live in the
database), the worker check says the queue is unavailable in JSON, every API endpoint answers JSON, and the pages
that need Redis (sign-up) say so instead of a 500."""

import httpx
import pytest

from lab.tokens.services import api_token_create
from tests.fixtures.factories import PASSWORD
from tests.fixtures.processes import login, start_web
from tests.fixtures.voting_factories import finished_round, voting_group

pytestmark = [pytest.mark.services, pytest.mark.faults]


def get_token(web_url: str, username: str, password: str) -> httpx.Response:
    return httpx.post(f"{web_url}/api/v1/auth/token/", data={"username": username, "password": password}, timeout=30)


def test_with_redis_down_sign_in_works_limits_hold_and_every_endpoint_answers_json(
    transactional_db, workspace, owner, editor, tmp_path, private_redis
):
    group = voting_group(workspace, owner, n=2)
    round_ = finished_round(group, owner)
    token = api_token_create(user=owner, name="outage")[1]
    web = start_web(tmp_path, REDIS_URL=private_redis.url)
    try:
        private_redis.stop()

        browser = login(web.url, owner.username)  # the login form: before, a 500 from its rate limit's cache
        page = browser.get(f"/w/{workspace.pk}/")
        issued = get_token(web.url, owner.username, PASSWORD)
        guesses = [get_token(web.url, editor.username, f"guess-{n}").status_code for n in range(6)]

        api = httpx.Client(base_url=web.url, headers={"Authorization": f"Token {token}"}, timeout=30)
        reads = {
            path: api.get(path)
            for path in (
                "/api/v1/workspaces/",
                f"/api/v1/workspaces/{workspace.pk}/models/",
                "/api/v1/groups/",
                f"/api/v1/groups/{group.pk}/",
                f"/api/v1/rounds/{round_.pk}/",
                f"/api/v1/groups/{group.pk}/report/",
                f"/api/v1/workspaces/{workspace.pk}/leaderboard/",
                f"/api/v1/workspaces/{workspace.pk}/inbox/next/",
                f"/api/v1/workspaces/{workspace.pk}/audit/",
                "/api/v1/tokens/",
            )
        }
        check = api.post(f"/api/v1/workspaces/{workspace.pk}/worker-check/")
        run = api.post(f"/api/v1/groups/{group.pk}/runs/", json={})
        browser.post("/logout/", headers={"X-CSRFToken": browser.cookies["csrftoken"], "Referer": web.url})
        browser.get("/register/")
        sign_up = browser.post(
            "/register/",
            data={
                "username": "newcomer",
                "password1": "correct horse battery staple",
                "csrfmiddlewaretoken": browser.cookies["csrftoken"],
            },
            headers={"Referer": f"{web.url}/register/"},
        )

        private_redis.start()
        check_after = api.post(f"/api/v1/workspaces/{workspace.pk}/worker-check/")
    finally:
        web.stop()

    assert page.status_code == 200
    assert issued.status_code == 200 and issued.json()["token"]
    assert guesses == [400] * 5 + [429]
    for path, response in reads.items():
        assert response.status_code == 200, (path, response.text[:300])
        assert response.headers["Content-Type"] == "application/json", path
    assert check.status_code == 503  # before: an HTML 500
    assert check.headers["Content-Type"] == "application/json" and check.headers["Retry-After"] == "5"
    assert check.json()["unavailable"] == "redis"
    assert run.status_code == 202  # queued; the sweeper sends it once the broker is back (test_enqueue_broker_down)
    assert sign_up.status_code == 503 and "Prompt Lab is temporarily unavailable" in sign_up.text
    assert check_after.status_code == 202
    assert "Internal Server Error" not in web.output()
