"""Answer rendering: Markdown and highlighted code come out as HTML; nothing a model writes can run in a page."""

import random

import pytest

from lab.markdown import PLAIN_PROSE, markdown_sanitized, render_markdown


def test_markdown_and_fenced_code_are_rendered_with_highlighting():
    html = render_markdown("**bold** and `code`\n\n```python\ndef f():\n    return 1\n```\n")
    assert "<strong>bold</strong>" in html
    assert '<div class="highlight">' in html
    assert '<span class="k">def</span>' in html


def test_raw_html_in_an_answer_is_shown_as_text_not_parsed():
    html = render_markdown('Use <script>alert(1)</script> or <img src=x onerror="alert(1)">')
    assert "<script" not in html and "<img" not in html
    assert "&lt;script&gt;" in html


def test_javascript_links_lose_their_target_and_images_are_dropped():
    html = render_markdown("[click](javascript:alert(1)) ![pixel](https://tracker.example/p.png?secret=1)")
    assert "javascript:" not in html
    assert "tracker.example" not in html
    assert 'rel="noopener noreferrer nofollow"' in html


def test_ordinary_links_are_kept():
    assert 'href="https://example.com"' in render_markdown("[docs](https://example.com)")


# Plain prose takes a shortcut (lab.markdown.PLAIN_PROSE); every text must still come out as the full renderer's
# exact bytes, whichever way it goes.
PROSE = [
    "Positive",
    "42",
    "Paris.",
    "t0 t1 t2 t3 t4 t5 t6 t7 t8 t9",
    'He said "yes" (twice): 3/4 of 100% + 5 = $80 @ noon; fine? Sure!',
    "C# and F# are languages.",
    "It’s “quoted” — and – dashed…",
    "naïve café, 日本語, Ελληνικά, 𝐀𝐁",
    "First line\nsecond line of the same paragraph",
    "One paragraph.\n\nAnother one.\n\nA third, with 2 lines\nhere.",
    "1.5 is a number, not a list",
    "1) is not a list in Markdown",
    "a  b with two spaces inside",
]
NOT_PROSE = [
    "**bold** and `code`\n\n```python\ndef f():\n    return 1\n```\n",
    "1. a list\n2. of two",
    "2024. That year",
    "١. list in Arabic-Indic digits",
    "a\n=",
    "a\n-",
    "a\n---\nb",
    "Title\n# heading",
    "- item",
    "> quote",
    "    indented code",
    " leading space",
    "trailing space ",
    "line break  \nhere",
    "a\n\n\nb",
    "a\r\nb",
    "tab\there",
    "snake_case_name",
    "2 * 3 * 4",
    "AT&T &amp; &lt;b&gt;",
    "a < b > c",
    "| a | b |\n|---|---|\n| 1 | 2 |",
    "[click](javascript:alert(1)) ![pixel](https://tracker.example/p.png)",
    "<https://example.com> and <me@example.com>",
    'Use <script>alert(1)</script> or <img src=x onerror="alert(1)">',
    "<p onclick=alert(1)>hi</p>",
    "x <!-- comment --> y",
    "back\\slash \\*not em\\*",
    "~~~\nfenced\n~~~",
    "nbsp\u00a0here",
    "nul\x00here",
    "stx\x02etx\x03",
    "",
    "   ",
]


@pytest.mark.parametrize("text", PROSE)
def test_plain_prose_takes_the_shortcut_and_gets_the_full_renderers_bytes(text):
    assert PLAIN_PROSE.fullmatch(text)
    assert render_markdown(text) == markdown_sanitized(text)


@pytest.mark.parametrize("text", NOT_PROSE)
def test_markup_code_and_html_go_through_markdown_and_the_sanitizer(text):
    assert not PLAIN_PROSE.fullmatch(text)
    assert render_markdown(text) == markdown_sanitized(text)


def test_random_texts_near_plain_prose_get_the_full_renderers_bytes():
    """Texts mostly of prose characters, now and then one Markdown or HTML reads as markup: whichever way each goes,
    its HTML is the full renderer's."""
    rng = random.Random(45)
    prose = list("abcXYZ019 .,;:?!'\"()/%+=@$#-’“—…é日²١\n")
    risky = list("*_`[]<>&\\|~\t\r\u00a0\x00 \n=-#>0123456789.")
    shortcuts = 0
    for _ in range(3000):
        length = rng.randint(1, 24)
        text = "".join(rng.choice(risky if rng.random() < 0.08 else prose) for _ in range(length))
        shortcuts += bool(PLAIN_PROSE.fullmatch(text))
        assert render_markdown(text) == markdown_sanitized(text), repr(text)
    assert shortcuts > 300  # the shortcut was tried often enough to mean something
