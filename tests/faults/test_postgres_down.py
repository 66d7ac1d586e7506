"""Postgres away for a while: every request is answered within a few seconds, 503 with Retry-After (JSON on the
API, a readable page elsewhere), and the site answers again within seconds of the database's return.

The web process runs on a private Postgres (a copy of the test database), so stopping it disturbs no other test.
"""

import time

import httpx
import pytest

from lab.tokens.services import api_token_create
from tests.fixtures import processes
from tests.fixtures.processes import login, start_web

pytestmark = [pytest.mark.services, pytest.mark.faults]

# Generous bounds for a loaded 2-core machine; docs/operations.md gives the times measured.
ANSWERED_WITHIN_S = 12
BACK_WITHIN_S = 5  # before the pool gave up its retries after DB_RECONNECT_TIMEOUT_S, this took 9 s
OUTAGE_S = 20  # long enough for psycopg_pool's doubling retry delay to reach 8-16 s


def timed(request) -> tuple[httpx.Response, float]:
    started = time.monotonic()
    response = request()
    return response, time.monotonic() - started


def test_while_postgres_is_down_requests_get_a_quick_503_and_the_site_is_back_as_soon_as_it_returns(
    transactional_db, workspace, owner, tmp_path, private_postgres
):
    token = api_token_create(user=owner, name="outage")[1]
    web = start_web(tmp_path, DATABASE_URL=private_postgres.copy_database(processes.test_database_url(), "lab"))
    api = httpx.Client(base_url=web.url, headers={"Authorization": f"Token {token}"}, timeout=60)
    try:
        browser = login(web.url, owner.username)
        assert api.get("/api/v1/workspaces/").status_code == 200

        private_postgres.halt()
        down_since = time.monotonic()
        answers = []
        while time.monotonic() - down_since < OUTAGE_S:
            answers.append(timed(lambda: api.get("/api/v1/workspaces/")))
            answers.append(timed(lambda: browser.get(f"/w/{workspace.pk}/")))

        private_postgres.start()
        back_at = time.monotonic()
        while (response := api.get("/api/v1/workspaces/")).status_code != 200:
            assert time.monotonic() - back_at < BACK_WITHIN_S, response.text[:300]
            time.sleep(0.1)
        back_after = time.monotonic() - back_at
        page = browser.get(f"/w/{workspace.pk}/")
    finally:
        web.stop()

    api_answers = answers[0::2]
    page_answers = answers[1::2]
    for response, seconds in answers:
        assert response.status_code == 503, response.text[:300]
        assert seconds < ANSWERED_WITHIN_S
        assert response.headers["Retry-After"] == "5"
    for response, _ in api_answers:
        assert response.headers["Content-Type"] == "application/json"
        assert response.json() == {
            "detail": "The database is unavailable; try again in a few seconds.",
            "unavailable": "database",
        }
    for response, _ in page_answers:
        assert response.headers["Content-Type"].startswith("text/html")
        assert "Prompt Lab is temporarily unavailable" in response.text
    assert page.status_code == 200
    print(
        f"answers while down: {max(seconds for _, seconds in answers):.1f} s at most; "
        f"back {back_after:.1f} s after the database"
    )
