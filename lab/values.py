"""What the lab stores of a value that came from outside (a request body, an uploaded file, a form's JSON).

Postgres cannot store the NUL character in text or jsonb, nor a lone UTF-16 surrogate (it is not UTF-8); and a
value nested thousands deep breaks every recursive step after parsing (serializers, renderers, the JSON encoder).
Every way in asks `value_problem` and refuses the value with the path it names, so none of them reaches a 500.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

MAX_DEPTH = 32  # far beyond any real variable or row; deep enough for structured values
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")


def shown(text: str) -> str:
    """`text` safe to echo in a message: NUL and lone surrogates spelled as escapes (a surrogate cannot be encoded)."""
    return _UNSTORABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def text_problem(text: str) -> str | None:
    match = _UNSTORABLE.search(text)
    if match is None:
        return None
    if match.group() == "\x00":
        return "text may not contain the NUL character (\\u0000)."
    return f"text may not contain a lone surrogate (\\u{ord(match.group()):04x}); send valid Unicode."


def name_problem(name: str, *, noun: str, max_length: int) -> str | None:
    """Why `name` (already stripped) cannot name a `noun` (a dataset, a prompt): missing, longer than its column,
    or text the database cannot store."""
    if not name:
        return f"Give the {noun} a name."
    if len(name) > max_length:
        return f"A {noun}'s name has at most {max_length} characters."
    return text_problem(name)


def too_deep(max_depth: int = MAX_DEPTH) -> str:
    return f"nested more than {max_depth} levels deep."


def value_problem(
    value: Any, *, max_depth: int = MAX_DEPTH, counted_apart: Callable[[list[str]], bool] | None = None
) -> tuple[list[str], str] | None:
    """The path (keys and [indexes], shown safely) to the first part of `value` that cannot be stored, and why;
    None when all of it can. Iterative, so a hostile depth cannot exhaust the stack here.

    A part whose path `counted_apart` accepts counts its depth from itself (a JSON Schema inside a body gets the
    same `max_depth` as a value of its own, so its owner's limit and this one agree); the limit still holds inside."""
    stack: list[tuple[list[str], Any, int]] = [([], value, 0)]
    while stack:
        path, item, depth = stack.pop()
        if isinstance(item, str):
            if problem := text_problem(item):
                return path, problem
        elif isinstance(item, dict | list):
            if counted_apart is not None and path and counted_apart(path):
                depth = 0
            if depth >= max_depth:
                return path, too_deep(max_depth)
            if isinstance(item, dict):
                for key, child in reversed(item.items()):
                    key = str(key)
                    if problem := text_problem(key):
                        return [*path, shown(key)], f"a key: {problem}"
                    stack.append(([*path, key], child, depth + 1))
            else:
                stack.extend(
                    ([*path, f"[{index}]"], child, depth + 1) for index, child in reversed(list(enumerate(item)))
                )
    return None


def dotted(path: list[str]) -> str:
    return "".join(part if part.startswith("[") else f".{part}" for part in path).lstrip(".")
