"""The one renderer for model answers: Markdown with Pygments highlighting, then sanitized with nh3.

Model output is untrusted text. Raw HTML in it is escaped (shown as text, never parsed), and the HTML that
Markdown produces is cleaned against an allow-list as a second line of defence. Images are dropped: an answer
could otherwise make every reader's browser fetch an attacker's URL.
"""

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
    html = _converter().convert(text)
    return nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
    )
