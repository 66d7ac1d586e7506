"""The one renderer for model answers: Markdown with Pygments highlighting, then sanitized with nh3.

Model output is untrusted text. Raw HTML in it is escaped (shown as text, never parsed), and the HTML that
Markdown produces is cleaned against an allow-list as a second line of defence. Images are dropped: an answer
could otherwise make every reader's browser fetch an attacker's URL.

Plain prose skips both steps, because both would hand it back unchanged: an answer made only of paragraphs of
words, spaces and ordinary punctuation (a label, a number, a sentence or a few), with nothing Markdown reads as
markup and nothing HTML must escape. Markdown wraps each paragraph in <p>, and nh3 keeps those as they are. The
two steps cost 0.05–0.09 ms an answer, up to a tenth of the CPU an experiment's call costs the command; the check
costs a tenth of that. tests/lab/test_markdown.py holds the shortcut to the full renderer's exact bytes.
"""

import re
import threading

import markdown as python_markdown
import nh3

ALLOWED_TAGS = {
    "p", "br", "hr", "strong", "em", "del", "code", "pre", "span", "div", "blockquote",
    "ul", "ol", "li", "h1", "h2", "h3", "h4", "h5", "h6", "a",
    "table", "thead", "tbody", "tr", "th", "td",
}  # fmt: skip
ALLOWED_ATTRIBUTES = {"*": {"class"}, "a": {"href", "title"}, "ol": {"start"}, "th": {"align"}, "td": {"align"}}
EXTENSIONS = ["fenced_code", "codehilite", "tables", "sane_lists"]
EXTENSION_CONFIGS = {"codehilite": {"guess_lang": False, "css_class": "highlight"}}

# Punctuation neither Markdown (with EXTENSIONS) nor HTML gives a meaning inside a line: no `*_`[]<>&\|~`, no tab.
_PUNCTUATION = " .,;:?!'\"()/%+=@$#’‘“”—–…-"
_CHAR = rf"(?:[^\W_]|[{re.escape(_PUNCTUATION)}])"
# A line starts with a letter or digit (no list, heading, quote, rule, fence or indented code) but not as an
# ordered list does ("1. "), and ends with no space (two would make a line break).
_LINE = rf"(?!\d+\.(?:[ \n]|\Z))[^\W_](?:{_CHAR}*(?<! ))?"
_PARAGRAPH = rf"{_LINE}(?:\n{_LINE})*"  # lines of one paragraph ("a\n=" would be a heading: excluded above)
PLAIN_PROSE = re.compile(rf"{_PARAGRAPH}(?:\n\n{_PARAGRAPH})*")

_local = threading.local()


def _converter() -> python_markdown.Markdown:
    """This thread's Markdown instance. One is not thread-safe and keeps state between conversions, so each
    thread has its own and resets it before every answer; building one costs several times a conversion."""
    md = getattr(_local, "md", None)
    if md is None:
        md = python_markdown.Markdown(extensions=EXTENSIONS, extension_configs=EXTENSION_CONFIGS)
        md.preprocessors.deregister("html_block")
        md.inlinePatterns.deregister("html")
        _local.md = md
    return md.reset()


def render_markdown(text: str) -> str:
    """Safe HTML for an answer; the page styles `.highlight` with a Pygments stylesheet."""
    if PLAIN_PROSE.fullmatch(text):
        return "\n".join(f"<p>{paragraph}</p>" for paragraph in text.split("\n\n"))
    return markdown_sanitized(text)


def markdown_sanitized(text: str) -> str:
    """The full renderer, for any text: Markdown, then nh3 (`render_markdown` gives plain prose the same bytes)."""
    html = _converter().convert(text)
    return nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
    )
