"""Which of promptfoo's Nunjucks a prompt may use: `{{ var }}` and `{{var}}` only, filled by the lab's renderer.

No template engine runs on user text (lab.templating), so any other construct — a `{% tag %}`, a `{# comment #}`, a
filter `{{ x | upper }}`, an attribute `{{ x.y }}` — is refused up front, named with its place, rather than sent as
written and answered differently from promptfoo.
"""

from __future__ import annotations

import re

PLAIN = re.compile(r"\{\{\s*[A-Za-z_][A-Za-z0-9_]*\s*\}\}")
ANY_CONSTRUCT = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}|\{\{|\{%|\{#", re.DOTALL)


def unsupported_constructs(text: str) -> list[str]:
    """Every Nunjucks construct in `text` other than a plain `{{ var }}`, as written, in order."""
    return [m.group(0) for m in ANY_CONSTRUCT.finditer(text) if not PLAIN.fullmatch(m.group(0))]


def variables_used(text: str) -> list[str]:
    return list(dict.fromkeys(m.group(0).strip("{} \t\n") for m in PLAIN.finditer(text)))
