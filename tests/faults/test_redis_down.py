"""Redis down while people vote: the vote (or its undo, or a voter's exclusion) is saved and answered in JSON (live
update delayed), never a 500; the report shows it meanwhile (computed without the cache) and once Redis is back."""

import pytest

from tests.fixtures.processes import free_port, login, start_web
from tests.fixtures.voting_factories import finished_round, voting_group
from voting.models import Vote

pytestmark = [pytest.mark.services, pytest.mark.faults]


def csrf(client, web_url: str) -> dict:
    return {"X-CSRFToken": client.cookies["csrftoken"], "Referer": web_url}


def test_a_vote_cast_while_redis_is_down_is_saved_and_answered_in_json_and_the_report_catches_up(
    transactional_db, workspace, owner, tmp_path, private_redis
):
    group = voting_group(workspace, owner, n=2)
    round_ = finished_round(group, owner)
    winner = round_.outputs.order_by("variant__position").first()
    web = start_web(tmp_path, REDIS_URL=private_redis.url)
    try:
        client = login(web.url, owner.username)
        report = client.get(f"/api/v1/groups/{group.pk}/report/")
        assert report.status_code == 200 and report.json()["report"]["votes"] == 0  # now in the cache

        private_redis.stop()
        response = client.post(
            f"/api/v1/rounds/{round_.pk}/vote/", json={"output": winner.pk}, headers=csrf(client, web.url)
        )
        assert response.status_code == 200, response.text
        body = response.json()
        assert body["live"] == "delayed"
        assert body["detail"].startswith("Your vote is saved.")
        assert body["vote"]["output"] == winner.pk and body["tally"]["total"] == 1
        assert Vote.objects.get(round=round_, user=owner).output_id == winner.pk
        # The report's cache is Redis too: without it, the report is computed for the request, vote included.
        assert client.get(f"/api/v1/groups/{group.pk}/report/").json()["report"]["votes"] == 1

        private_redis.start()
        assert client.get(f"/api/v1/rounds/{round_.pk}/vote/").json()["tally"]["total"] == 1
        assert client.get(f"/api/v1/groups/{group.pk}/report/").json()["report"]["votes"] == 1
        again = client.post(f"/api/v1/rounds/{round_.pk}/vote/", json={"verdict": "tie"}, headers=csrf(client, web.url))
        assert again.status_code == 200 and again.json()["live"] == "sent"
    finally:
        web.stop()
    assert "Internal Server Error" not in web.output()


def test_a_vote_whose_live_update_cannot_be_sent_still_replaces_the_cached_report(
    transactional_db, settings, api, workspace, owner
):
    # The channel layer is unreachable, the cache is not: the report must not keep serving the count before the
    # vote (the tally's broadcast used to raise before the cache's invalidation ran, and the vote answered 500).
    group = voting_group(workspace, owner, n=2)
    round_ = finished_round(group, owner)
    winner = round_.outputs.order_by("variant__position").first()
    assert api.get(f"/api/v1/groups/{group.pk}/report/").json()["report"]["votes"] == 0
    closed = f"redis://127.0.0.1:{free_port()}/0"
    settings.CHANNEL_LAYERS = {
        "default": {"BACKEND": "channels_redis.core.RedisChannelLayer", "CONFIG": {"hosts": [closed]}}
    }

    response = api.post(f"/api/v1/rounds/{round_.pk}/vote/", {"output": winner.pk}, format="json")

    assert response.status_code == 200
    assert response.json()["live"] == "delayed"
    assert api.get(f"/api/v1/groups/{group.pk}/report/").json()["report"]["votes"] == 1


def test_an_undone_vote_and_an_excluded_voter_are_saved_and_answered_while_the_cache_is_unreachable(
    transactional_db, settings, api, workspace, owner
):
    # The reports' cache (Redis) is away: taking back a vote or leaving a voter out is committed and answered as
    # a vote is, not a 500 raised by the cache's invalidation after the commit.
    round_ = finished_round(voting_group(workspace, owner, n=2), owner)
    winner = round_.outputs.order_by("variant__position").first()
    assert api.post(f"/api/v1/rounds/{round_.pk}/vote/", {"output": winner.pk}, format="json").status_code == 200
    closed = f"redis://127.0.0.1:{free_port()}/0"
    settings.CACHES = {"default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": closed}}

    undo = api.post(f"/api/v1/workspaces/{workspace.pk}/inbox/undo/", {"round": round_.pk}, format="json")
    excluded = api.put(
        f"/api/v1/workspaces/{workspace.pk}/voters/{owner.pk}/exclusion/", {"reason": "testing"}, format="json"
    )

    assert undo.status_code == 200 and undo.json()["undone"] == "vote"
    assert not Vote.objects.filter(round=round_, user=owner).exists()
    assert excluded.status_code == 200 and excluded.json()["reason"] == "testing"
