"""The comparison pages' layout in a real Chromium: the editor at five columns keeps its labels readable and its
tools inside their column; a models comparison names its columns by model unless it is blind."""

import pytest

from compare import services
from compare.models import Mode
from tests.fixtures.browser import log_in, off_loop, shoot
from tests.fixtures.compare_factories import INSTANT, make_round

pytestmark = [pytest.mark.browser, pytest.mark.services]

# Wide enough to read "Variant 5 v2" and edit it; before the fix five columns at 1280 px left the label ~0 px.
MIN_LABEL_PX = 100

# Every element of a column whose box pokes out of the column's box (a pixel of rounding allowed).
OVERFLOWING_JS = """() => [...document.querySelectorAll('.ecol')].flatMap((col, n) => {
  const box = col.getBoundingClientRect();
  return [...col.querySelectorAll('*')].filter((el) => {
    const r = el.getBoundingClientRect();
    return r.width > 0 && (r.left < box.left - 1 || r.right > box.right + 1);
  }).map((el) => `column ${n + 1}: ${el.tagName.toLowerCase()}.${el.className} ${el.textContent.slice(0, 20)}`);
})"""


def test_the_editor_at_five_columns_keeps_labels_readable_and_tools_inside_their_column(
    transactional_db, owner, workspace, web_server, page_factory, screenshots
):
    page = page_factory(1280, 900)
    log_in(page, web_server.url, owner.username)
    page.goto(f"{web_server.url}/w/{workspace.pk}/compare/new/")
    page.wait_for_selector(".ecol")
    page.fill("input[name=title]", "Five ways to greet")
    for _ in range(3):
        page.click("[data-action=add-variant]")
    assert page.locator(".ecol").count() == 5
    for n, label in enumerate(("Plain", "Formal", "Pirate", "Haiku", "Shakespearean"), start=1):
        page.fill(f"[aria-label='Label of variant {n}']", label)

    fifth = page.locator(".ecol").nth(4)
    fifth.locator(".overrides summary").click()
    fifth.locator(".add-var").click()  # a variable row inside the narrowest column
    widths = [box["width"] for box in (label.bounding_box() for label in page.locator(".ecol-label").all())]
    assert min(widths) >= MIN_LABEL_PX, widths
    assert page.evaluate(OVERFLOWING_JS) == []
    removes = page.locator("[data-op=remove]").all()
    assert all(remove.is_visible() for remove in removes)
    # The five columns fit side by side at a desktop width: the editor does not scroll sideways here.
    assert page.evaluate("() => document.documentElement.scrollWidth - document.documentElement.clientWidth") <= 0
    shoot(page, screenshots, "editor-five-columns", full_page=True)


def models_group(workspace, owner, *, blind: bool):
    """Three models on one prompt: two keep the letter they were handed, one was given a name."""
    variants = [
        {"label": "", "model": INSTANT, "prompt": "Say hi."},
        {"label": "Fast one", "model": "simulated::writer", "prompt": "Say hi."},
        {"label": "C", "model": "simulated::coder", "prompt": "Say hi."},
    ]
    group = services.group_create(
        workspace=workspace, user=owner, title="Models", mode=Mode.MODELS, variants=variants, blind=blind
    )
    make_round(group)
    return group


def test_a_models_comparison_heads_its_columns_by_model_unless_it_is_blind(
    transactional_db, owner, workspace, web_server, page_factory, screenshots
):
    shown = off_loop(models_group, workspace, owner, blind=False)
    hidden = off_loop(models_group, workspace, owner, blind=True)
    page = page_factory(1280, 900)
    log_in(page, web_server.url, owner.username)

    page.goto(f"{web_server.url}/compare/{shown.pk}/")
    page.wait_for_selector(".round .col")
    titles = page.locator(".col-title").all_inner_texts()
    assert titles == [INSTANT, "Fast one · simulated::writer", "simulated::coder"]
    shoot(page, screenshots, "comparison-models-headings")

    page.goto(f"{web_server.url}/compare/{hidden.pk}/")
    page.wait_for_selector(".round .col")
    assert page.locator(".col-title").all_inner_texts() == ["Answer A", "Answer B", "Answer C"]
    assert "simulated::" not in page.content()
