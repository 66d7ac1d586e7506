"""Tool calls in a real Chromium, against the web process and a real worker that calls the fake server: a
two-model comparison (an OpenAI and an Anthropic connection) with one tool; each column shows its model's call
with its arguments and whether they are valid. The page is saved as `tool-calls.png` (run with ARTEFACTS_DIR=docs
to refresh docs/screenshots/tool-calls.png)."""

import json
import re

import pytest
from rest_framework.test import APIClient

from lab.services import connection_create
from tests.fixtures.browser import log_in, off_loop, shoot, until

pytestmark = [pytest.mark.browser, pytest.mark.services]

WEATHER = {
    "type": "function",
    "function": {
        "name": "get_weather",
        "description": "The forecast for a city.",
        "parameters": {
            "type": "object",
            "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
            "required": ["city"],
        },
    },
}


def create(owner, workspace, fake_llm) -> int:
    connection_create(workspace=workspace, name="oai", kind="openai", base_url=fake_llm.openai_url, api_key="sk-1")
    connection_create(
        workspace=workspace, name="claude", kind="anthropic", base_url=fake_llm.anthropic_url, api_key="sk-2"
    )
    good = fake_llm.model(tool="get_weather", args=json.dumps({"city": "Lisbon", "days": 2}), token_ms=5)
    bad = fake_llm.model(tool="get_weather", args=json.dumps({"days": "two"}), token_ms=5)
    api = APIClient()
    api.force_authenticate(owner)
    response = api.post(
        "/api/v1/groups/",
        {
            "workspace": workspace.pk,
            "title": "Weather tool",
            "mode": "models",
            "tools": [WEATHER],
            "tool_choice": "auto",
            "variants": [
                {"model": f"oai::{good}", "prompt": "What is the weather in Lisbon?"},
                {"model": f"claude::{bad}", "prompt": "What is the weather in Lisbon?"},
            ],
        },
        format="json",
    )
    assert response.status_code == 201, response.content
    return response.json()["id"]


def test_a_two_model_comparison_shows_each_columns_tool_call_and_its_validity(
    transactional_db, owner, workspace, fake_llm, web_server, celery_worker_process, page_factory, screenshots
):
    group_id = off_loop(create, owner, workspace, fake_llm)
    page = page_factory(1280, 800)
    log_in(page, web_server.url, owner.username)
    page.goto(f"{web_server.url}/compare/{group_id}/")
    page.click("[data-action=rerun]")
    page.wait_for_url(re.compile(r"/compare/\d+/rounds/1/$"))
    until(page, "document.querySelector('.round')?.dataset.status === 'done'", timeout=30)
    until(page, "[...document.querySelectorAll('.col')].every(c => c.dataset.synced === '1')", timeout=10)
    until(page, "document.querySelectorAll('.tool-call[data-valid]').length === 2", timeout=10)

    columns = page.locator(".col")
    first, second = columns.nth(0), columns.nth(1)
    assert first.locator(".tool-name").inner_text() == "get_weather"
    assert json.loads(first.locator(".tool-args").inner_text()) == {"city": "Lisbon", "days": 2}
    assert first.locator(".tool-call").get_attribute("data-valid") == "true"
    assert first.locator(".chip.tool-valid").inner_text() == "valid"
    assert json.loads(second.locator(".tool-args").inner_text()) == {"days": "two"}
    assert second.locator(".tool-call").get_attribute("data-valid") == "false"
    assert second.locator(".chip.tool-invalid").inner_text() == "invalid"
    assert second.locator(".tool-error").inner_text() == "'city' is a required property"
    assert page.locator(".col .muted:has-text('No text.')").count() == 0
    shoot(page, screenshots, "tool-calls", full_page=True)
