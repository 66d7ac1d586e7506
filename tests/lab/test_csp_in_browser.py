"""Every page is served with a strict Content-Security-Policy header, and works under it in a real Chromium: no
inline script or style is needed, nothing violates the policy, and a script injected inline does not run."""

from __future__ import annotations

import pytest

from compare.datasets.services import dataset_create
from tests.fixtures.browser import log_in, off_loop, watch
from tests.fixtures.compare_factories import make_group
from tests.fixtures.judging_factories import answered_round, make_judge

pytestmark = [pytest.mark.browser, pytest.mark.services]

STRICT = {
    "default-src": "'self'",
    "script-src": "'self'",
    "style-src": "'self'",
    "object-src": "'none'",
    "base-uri": "'none'",
    "frame-ancestors": "'none'",
}
PAGES = [
    "/w/{workspace}/",
    "/w/{workspace}/settings/",
    "/w/{workspace}/compare/new/",
    "/compare/{group}/",
    "/compare/{group}/edit/",
    "/compare/{group}/report/",
    "/w/{workspace}/leaderboard/",
    "/w/{workspace}/datasets/",
    "/datasets/{dataset}/",
    "/w/{workspace}/experiments/",
    "/w/{workspace}/experiments/new/",
    "/w/{workspace}/judges/",
    "/w/{workspace}/judges/new/",
    "/judges/{judge}/",
    "/settings/tokens/",
    "/w/{workspace}/audit/",
    "/api/docs/",
]
INJECT = """() => {
    const script = document.createElement("script");
    script.textContent = "window.injectedRan = true";
    document.body.append(script);
    return window.injectedRan === true;
}"""


def directives(header: str) -> dict[str, str]:
    pairs = (part.strip().split(" ", 1) for part in header.split(";") if part.strip())
    return {name: value for name, value in pairs}


def test_every_page_runs_under_a_strict_policy(
    transactional_db, owner, workspace, connections, fake_llm, web_server, page_factory
):
    def build():
        group = make_group(workspace, owner, title="Tea")
        answered_round(group, owner, ["one", "two"])
        dataset = dataset_create(workspace=workspace, user=owner, name="Rows", rows=[{"vars": {"a": 1}}])
        judge, _ = make_judge(workspace, owner, fake_llm)
        return {"workspace": workspace.pk, "group": group.pk, "dataset": dataset.pk, "judge": judge.pk}

    ids = off_loop(build)
    page = page_factory()
    _, errors = watch(page)
    log_in(page, web_server.url, owner.username)

    for path in PAGES:
        url = web_server.url + path.format(**ids)
        response = page.goto(url)
        page.wait_for_load_state("networkidle")

        assert response.status == 200, url
        policy = directives(response.headers["content-security-policy"])
        assert {name: policy.get(name) for name in STRICT} == STRICT, url
        assert "unsafe" not in response.headers["content-security-policy"]
        assert [error for error in errors if "favicon" not in error] == [], url  # the page itself broke no rule

        assert page.evaluate(INJECT) is False, f"an injected inline script ran on {url}"
        assert any("Content Security Policy" in error for error in errors)
        errors.clear()


def test_the_api_docs_render_under_the_policy(transactional_db, owner, web_server, page_factory):
    page = page_factory()
    _, errors = watch(page)
    log_in(page, web_server.url, owner.username)

    page.goto(f"{web_server.url}/api/docs/")

    page.wait_for_selector(".swagger-ui .opblock", timeout=10_000)
    assert page.locator(".opblock").count() > 20
    assert [error for error in errors if "favicon" not in error] == []
