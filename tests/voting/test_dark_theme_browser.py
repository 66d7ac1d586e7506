"""The dark theme in a real Chromium: with the system set to dark (`prefers-color-scheme`), the report page is dark,
its text reads against it, and its chart draws in the theme's light ink; set to light, the same page stays light."""

import re

import pytest

from tests.fixtures.browser import log_in, off_loop, shoot, until
from tests.fixtures.voting_factories import finished_round, voting_group
from voting.services import vote_cast

pytestmark = [pytest.mark.browser, pytest.mark.services]

STYLE_JS = "([selector, property]) => getComputedStyle(document.querySelector(selector))[property]"
# Share of the chart's painted pixels that are light (relative luminance above 0.5): the ticks, axis title,
# legend and estimate marks. On a dark page they must be light to be read.
LIGHT_INK_JS = """() => {
  const canvas = document.getElementById('winrate-chart');
  const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
  let painted = 0, light = 0;
  for (let i = 0; i < data.length; i += 4) {
    if (data[i + 3] < 128) continue;
    painted++;
    if ((0.2126 * data[i] + 0.7152 * data[i + 1] + 0.0722 * data[i + 2]) / 255 > 0.5) light++;
  }
  return { painted, light };
}"""


def luminance(css: str) -> float:
    """WCAG relative luminance of an rgb()/rgba() colour."""
    channels = [int(c) / 255 for c in re.findall(r"\d+", css)[:3]]
    r, g, b = (c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4 for c in channels)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(one: str, other: str) -> float:
    high, low = sorted((luminance(one), luminance(other)), reverse=True)
    return (high + 0.05) / (low + 0.05)


def voted_group(workspace, owner):
    group = voting_group(workspace, owner, n=2)
    first, second = group.variants.order_by("position")
    for winner in (first, first, second):
        round_ = finished_round(group, owner, enqueue=False)
        vote_cast(round=round_, user=owner, output_id=round_.outputs.get(variant=winner).pk)
    return group


def style(page, selector: str, prop: str) -> str:
    return page.evaluate(STYLE_JS, [selector, prop])


def test_the_report_page_follows_a_dark_system_setting_with_a_readable_chart(
    transactional_db, owner, workspace, web_server, page_factory, screenshots
):
    group = off_loop(voted_group, workspace, owner)
    for scheme in ("dark", "light"):
        page = page_factory(1280, 900, color_scheme=scheme)
        log_in(page, web_server.url, owner.username)
        page.goto(f"{web_server.url}/compare/{group.pk}/report/")
        until(page, "window.Chart && Chart.getChart(document.getElementById('winrate-chart'))")
        background, text = style(page, "body", "backgroundColor"), style(page, "body", "color")
        card = style(page, ".card", "backgroundColor")
        ink = page.evaluate(LIGHT_INK_JS)
        assert ink["painted"] > 1000  # the chart drew
        if scheme == "dark":
            assert luminance(background) < 0.05 and luminance(card) < 0.05, (background, card)
            assert contrast(text, background) >= 7 and contrast(text, card) >= 7
            assert contrast(style(page, "main a", "color"), card) >= 4.5
            assert contrast(style(page, "main .muted", "color"), card) >= 4.5
            assert ink["light"] / ink["painted"] > 0.2, ink  # light ticks, title and marks
            shoot(page, screenshots, "report-dark", full_page=True)
            page.goto(f"{web_server.url}/compare/{group.pk}/")
            page.wait_for_selector(".col")
            column, foot = style(page, ".col", "backgroundColor"), style(page, ".col-foot", "backgroundColor")
            assert luminance(column) < 0.05 and luminance(foot) < 0.05, (column, foot)
            assert contrast(style(page, ".col .answer-stream, .col .answer", "color"), column) >= 7
            shoot(page, screenshots, "comparison-dark")
        else:
            assert luminance(background) > 0.8 and contrast(text, background) >= 7
            assert ink["light"] / ink["painted"] < 0.2, ink  # dark ink on the light page
