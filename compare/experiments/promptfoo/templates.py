"""Which of promptfoo's Nunjucks a prompt may use: `{{ var }}` and `{{var}}` only, filled by the lab's renderer; and
the text promptfoo would insert for a var (`var_texts`), so the lab's renderer inserts exactly that.

No template engine runs on user text (lab.templating), so any other construct — a `{% tag %}`, a `{# comment #}`, a
filter `{{ x | upper }}`, an attribute `{{ x.y }}` — is refused up front, named with its place, rather than sent as
written and answered differently from promptfoo.
"""

from __future__ import annotations

import math
import re
from typing import Any

PLAIN = re.compile(r"\{\{\s*[A-Za-z_][A-Za-z0-9_]*\s*\}\}")
ANY_CONSTRUCT = re.compile(r"\{\{.*?\}\}|\{%.*?%\}|\{#.*?#\}|\{\{|\{%|\{#", re.DOTALL)


def unsupported_constructs(text: str) -> list[str]:
    """Every Nunjucks construct in `text` other than a plain `{{ var }}`, as written, in order."""
    return [m.group(0) for m in ANY_CONSTRUCT.finditer(text) if not PLAIN.fullmatch(m.group(0))]


def variables_used(text: str) -> list[str]:
    return list(dict.fromkeys(m.group(0).strip("{} \t\n") for m in PLAIN.finditer(text)))


def js_text(value: Any) -> str:
    """What Nunjucks prints for a var's value: JavaScript's `String(value)` (a list joined by commas, an object as
    `[object Object]`, nothing for null), not the lab's JSON."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isfinite(value) and value == int(value) and abs(value) < 1e21:
            return str(int(value))
        return repr(value)
    if isinstance(value, list):
        return ",".join("" if item is None else js_text(item) for item in value)
    if isinstance(value, dict):
        return "[object Object]"
    return str(value)


REFERENCE = re.compile(r"\{\{\s*(\w+)\s*\}\}")


def var_texts(variables: dict[str, Any]) -> dict[str, str]:
    """The vars as promptfoo renders a prompt with them: a trailing newline dropped from text values, then a var
    naming another (`{{other}}`) filled in, the first such placeholder of each var per pass, five passes at most
    (promptfoo's resolveVariables), then each value as Nunjucks prints it."""
    resolved: dict[str, Any] = {k: v.removesuffix("\n") if isinstance(v, str) else v for k, v in variables.items()}
    for _ in range(5):
        changed = False
        for key, value in resolved.items():
            if not isinstance(value, str) or not (match := REFERENCE.search(value)):
                continue
            if match.group(1) in resolved:
                replacement = resolved[match.group(1)]
                text = replacement if isinstance(replacement, str) else js_text(replacement)
                resolved[key] = value.replace(match.group(0), text, 1)
                changed = True
        if not changed:
            break
    return {key: js_text(value) for key, value in resolved.items()}
