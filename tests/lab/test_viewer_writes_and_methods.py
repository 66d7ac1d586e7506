"""A viewer reads and votes but changes nothing: every write, over the API or a page, is a 403 and leaves the
database as it was. And every page refuses the HTTP methods it does not serve with a 405."""

from __future__ import annotations

import re

import pytest
from django.apps import apps
from django.test import Client
from django.urls import URLPattern, URLResolver, get_resolver

from compare.datasets.services import dataset_create
from tests.fixtures.compare_factories import make_group
from tests.fixtures.judging_factories import answered_round, make_judge

pytestmark = pytest.mark.django_db

API_WRITES = [
    ("post", "/api/v1/workspaces/{workspace}/worker-check/", {}),
    ("post", "/api/v1/workspaces/{workspace}/members/", {"username": "viewer", "role": "owner"}),
    ("patch", "/api/v1/workspaces/{workspace}/members/{owner}/", {"role": "viewer"}),
    ("delete", "/api/v1/workspaces/{workspace}/members/{owner}/", None),
    ("post", "/api/v1/workspaces/{workspace}/invitations/", {"role": "editor", "email": "new@example.com"}),
    ("post", "/api/v1/workspaces/{workspace}/connections/", {"name": "mine", "kind": "simulated"}),
    ("patch", "/api/v1/workspaces/{workspace}/connections/{connection}/", {"rpm": 1}),
    ("delete", "/api/v1/workspaces/{workspace}/connections/{connection}/", None),
    ("post", "/api/v1/workspaces/{workspace}/connections/{connection}/refresh-models/", {}),
    ("post", "/api/v1/groups/", "group"),
    ("delete", "/api/v1/groups/{group}/", None),
    ("post", "/api/v1/groups/{group}/runs/", {}),
    ("post", "/api/v1/groups/{group}/clone/", {}),
    ("put", "/api/v1/groups/{group}/judge/", {"judge": None}),
    ("post", "/api/v1/rounds/{round}/cancel/", {}),
    ("post", "/api/v1/rounds/{round}/judge/", {"judge": "{judge}"}),
    ("post", "/api/v1/datasets/", {"workspace": "{workspace}", "name": "d", "rows": [{"vars": {"a": 1}}]}),
    ("patch", "/api/v1/datasets/{dataset}/", {"name": "renamed"}),
    ("delete", "/api/v1/datasets/{dataset}/", None),
    ("post", "/api/v1/datasets/{dataset}/rows/", {"rows": [{"vars": {"a": 2}}]}),
    ("patch", "/api/v1/datasets/{dataset}/rows/1/", {"vars": {"a": 3}}),
    ("delete", "/api/v1/datasets/{dataset}/rows/1/", None),
    ("post", "/api/v1/datasets/import/", {"workspace": "{workspace}", "name": "d", "format": "csv", "content": "a\n1"}),
    ("post", "/api/v1/experiments/", {"workspace": "{workspace}", "file": "models: []", "dry_run": True}),
    ("post", "/api/v1/workspaces/{workspace}/judges/", {"name": "j", "model": "judge::fake"}),
    ("patch", "/api/v1/workspaces/{workspace}/judges/{judge}/", {"name": "renamed"}),
    ("delete", "/api/v1/workspaces/{workspace}/judges/{judge}/", None),
]

PAGE_WRITES = [
    ("/w/{workspace}/settings/members/", {"username": "viewer", "role": "owner"}),
    ("/w/{workspace}/settings/members/{owner}/", {"role": "viewer"}),
    ("/w/{workspace}/settings/invitations/", {"role": "editor", "email": "new@example.com"}),
    ("/w/{workspace}/settings/connections/", {"name": "mine", "kind": "simulated", "max_concurrency": 1, "rpm": 1}),
    ("/w/{workspace}/settings/connections/{connection}/refresh-models/", {}),
    ("/w/{workspace}/settings/connections/{connection}/remove/", {}),
    ("/w/{workspace}/compare/save/", {}),
    ("/w/{workspace}/experiments/estimate/", {}),
    ("/w/{workspace}/experiments/run/", {}),
    ("/w/{workspace}/datasets/preview/", {}),
    ("/w/{workspace}/datasets/import/", {}),
    ("/datasets/{dataset}/rename/", {"name": "renamed"}),
    ("/datasets/{dataset}/rows/", {"name": "r", "vars": '{"a": 2}'}),
    ("/datasets/{dataset}/rows/1/", {"name": "r", "vars": '{"a": 3}'}),
    ("/datasets/{dataset}/rows/1/delete/", {}),
    ("/datasets/{dataset}/delete/", {}),
    ("/w/{workspace}/judges/new/", {"name": "j"}),
    ("/judges/{judge}/edit/", {"name": "renamed"}),
    ("/judges/{judge}/delete/", {}),
    ("/judging/rounds/{round}/judge/", {}),
]


@pytest.fixture
def ids(workspace, owner, viewer, connections, fake_llm) -> dict[str, int]:
    group = make_group(workspace, owner)
    round_ = answered_round(group, owner, ["one", "two"])
    dataset = dataset_create(workspace=workspace, user=owner, name="Rows", rows=[{"name": "one", "vars": {"a": 1}}])
    judge, _ = make_judge(workspace, owner, fake_llm)
    return {
        "workspace": workspace.pk,
        "owner": owner.pk,
        "connection": connections[0].pk,
        "group": group.pk,
        "round": round_.pk,
        "dataset": dataset.pk,
        "judge": judge.pk,
    }


def filled(value, ids: dict[str, int]):
    if isinstance(value, str) and re.fullmatch(r"\{\w+\}", value):
        return ids[value[1:-1]]
    if isinstance(value, dict):
        return {key: filled(item, ids) for key, item in value.items()}
    return value


def snapshot() -> dict:
    """Every row of our apps, so a refused write is seen to have changed nothing at all."""
    labels = {"lab", "compare", "judging", "voting"}
    return {
        model._meta.label: sorted(map(repr, model.objects.values()))
        for model in apps.get_models()
        if model._meta.app_label in labels
    }


def group_body(ids) -> dict:
    variants = [{"model": "simulated::instant", "prompt": "Hi"}, {"model": "simulated::instant", "prompt": "Yo"}]
    return {"workspace": ids["workspace"], "mode": "prompts", "variants": variants}


@pytest.mark.parametrize(("method", "url", "body"), API_WRITES, ids=[f"{m} {u}" for m, u, _ in API_WRITES])
def test_a_viewer_gets_403_on_every_api_write(api_for, viewer, ids, method, url, body):
    body = group_body(ids) if body == "group" else filled(body, ids)
    before = snapshot()

    response = getattr(api_for(viewer), method)(url.format(**ids), body, format="json")

    assert response.status_code == 403, response.content
    assert "role" in response.json()["detail"]
    assert snapshot() == before


@pytest.mark.parametrize(("url", "form"), PAGE_WRITES, ids=[u for u, _ in PAGE_WRITES])
def test_a_viewer_gets_403_on_every_page_write(viewer, ids, url, form):
    client = Client()
    client.force_login(viewer)
    before = snapshot()

    response = client.post(url.format(**ids), form)

    assert response.status_code == 403, response.content[:300]
    assert snapshot() == before


def test_a_viewer_still_votes(api_for, viewer, ids):
    response = api_for(viewer).post(f"/api/v1/rounds/{ids['round']}/vote/", {"verdict": "tie"}, format="json")

    assert response.status_code == 200
    assert response.json()["tally"]["tie"] == 1


def page_patterns(resolvers=None, prefix: str = "") -> list[tuple[str, object]]:
    """(route, view) of every page: everything but the API, its schema and docs, and the admin."""
    found = []
    for entry in resolvers if resolvers is not None else get_resolver().url_patterns:
        route = prefix + str(entry.pattern)
        if route.startswith(("api/", "admin/")):
            continue
        if isinstance(entry, URLResolver):
            found += page_patterns(entry.url_patterns, route)
        elif isinstance(entry, URLPattern):
            found.append((route, entry.callback))
    return found


# A signed-in person is sent on from the login page before its method is looked at, so these are asked anonymously.
ANONYMOUS = {"login/", "logout/"}
OUR_CODE = ("lab.", "compare.", "judging.", "voting.", "promptlab.")
# Our pages, and the login and logout we mount; a third-party app's pages keep their own method handling.
PAGES = [(route, view) for route, view in page_patterns() if view.__module__.startswith(OUR_CODE) or route in ANONYMOUS]


def url_of(route: str) -> str:
    return "/" + re.sub(r"<(?:\w+:)?\w+>", "999999", route)


@pytest.mark.parametrize("route", [route for route, _ in PAGES], ids=[route for route, _ in PAGES])
def test_every_page_refuses_the_methods_it_does_not_serve(owner, route):
    assert len(PAGES) > 40
    client = Client()
    if route not in ANONYMOUS:
        client.force_login(owner)

    for method in ("put", "patch", "delete", "options"):
        assert getattr(client, method)(url_of(route)).status_code == 405, method


@pytest.mark.parametrize(
    "url",
    [
        "/w/{workspace}/settings/",
        "/compare/{group}/",
        "/w/{workspace}/",
        "/datasets/{dataset}/",
        "/judges/{judge}/",
        "/w/{workspace}/leaderboard/",
        "/compare/{group}/report/",
    ],
)
def test_a_page_that_only_shows_refuses_a_post(owner, ids, url):
    client = Client()
    client.force_login(owner)

    response = client.post(url.format(**ids))

    assert response.status_code == 405
    assert response["Allow"] in ("GET, HEAD", "HEAD, GET")
