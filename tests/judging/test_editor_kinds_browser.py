"""The judge editor in a real Chromium shows only the chosen kind's fields: a rubric's scale, mode, metrics and
prompt, or a classifier's settings (binary: its two categories; multiclass: its list), switching as the kind does."""

import pytest

from judging.models import JudgeConfig
from tests.fixtures.browser import log_in
from tests.fixtures.judging_factories import JUDGE

pytestmark = [pytest.mark.browser]


def shown(page, selector: str) -> bool:
    return page.locator(selector).first.is_visible()


def test_the_editor_shows_only_the_chosen_kinds_fields(
    transactional_db, owner, workspace, fake_llm, connections, web_server, page_factory
):
    page = page_factory(1280, 1000)
    log_in(page, web_server.url, owner.username)
    page.goto(f"{web_server.url}/w/{workspace.pk}/judges/new/")
    assert shown(page, "select[name=scale]") and shown(page, "[data-role=add-metric]")
    assert not shown(page, "textarea[name=criteria]") and not shown(page, "input[name=target]")

    page.select_option("select[name=kind]", "multiclass_classification")
    assert shown(page, "textarea[name=criteria]") and shown(page, "textarea[name=categories]")
    assert not shown(page, "input[name=target]") and not shown(page, "select[name=scale]")
    assert not shown(page, "[data-role=add-metric]") and not shown(page, "textarea[name=prompt]")

    page.select_option("select[name=kind]", "binary_classification")
    assert shown(page, "input[name=target]") and not shown(page, "textarea[name=categories]")

    # Saved through the same form: the server still checks and builds the classifier.
    page.fill("input[name=name]", "Concise or not")
    page.fill("input[name=model]", f"{JUDGE}::{fake_llm.model()}")
    page.fill("textarea[name=criteria]", "Is the answer concise?")
    page.fill("input[name=target]", "concise")
    page.fill("input[name=non_target]", "verbose")
    page.click("form.judge-editor button[type=submit]")
    page.wait_for_url(f"{web_server.url}/judges/*/")
    assert JudgeConfig.objects.get(name="Concise or not").kind == "binary_classification"
