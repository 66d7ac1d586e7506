"""What every section check of an experiment file shares: the problems found so far, and readers of text and lists.

The `read_*` modules each add one topic to `SectionReader`; `config` combines them and reads the sections in order.
"""

from __future__ import annotations

import json
from typing import Any

from lab.templating import ANGLE_FORMATS, from_angle_placeholders

from ..messages import cleaned, message_problems
from .files import Files
from .spec import FILE_PREFIX


def _json_list(text: str) -> list | None:
    """`text` as a JSON list, or None when it is not one (then it is a prompt's text)."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    return data if isinstance(data, list) else None


def parse_problem(exc: Exception) -> str:
    """A YAML or JSON error as a person reads it: the line and column counted from 1, then what is wrong."""
    mark = getattr(exc, "problem_mark", None)
    if mark is not None:
        return f"line {mark.line + 1}, column {mark.column + 1}: {getattr(exc, 'problem', '') or exc}"
    return str(exc)


def name_suffix(entry: Any, key: str) -> str:
    """`[3] (name)` for messages: entries are counted from 1, as people count."""
    name = entry.get(key) if isinstance(entry, dict) else None
    return f" ({name})" if isinstance(name, str | int) and str(name).strip() else ""


class SectionReader:
    def __init__(self, source: str, files: Files):
        self.source, self.files = source, files
        self.problems: list[str] = []

    def problem(self, where: str, message: str) -> None:
        self.problems.append(f"{self.source}: {where}: {message}")

    def _text(self, data: dict, key: str, where: str, *, default: str, max_length: int = 10_000) -> str:
        value = data.get(key)
        if value is None:
            return default
        if not isinstance(value, str) or not value.strip():
            self.problem(where, "write some text")
            return default
        if len(value) > max_length:
            self.problem(where, f"at most {max_length} characters")
        return value.strip()

    def _list(self, value: Any, where: str, *, required: bool, key: str) -> list[Any]:
        """A section's entries; a mapping of name → value is read as a list of entries named by their key."""
        if value is None:
            if required:
                self.problem(where, "missing; give at least one entry")
            return []
        if isinstance(value, dict):
            return [
                {key: name, **body} if isinstance(body, dict) else {key: name, "_value": body}
                for name, body in value.items()
            ]
        if not isinstance(value, list) or (required and not value):
            self.problem(where, "a list of entries" + (" (at least one)" if required else ""))
            return []
        return value

    def _unique(self, names: list[tuple[str, str]], what: str, rule: str) -> None:
        seen: dict[str, str] = {}
        for where, name in names:
            if name in seen:
                self.problem(where, f"{what}: {seen[name]} already uses {name!r}; {rule}")
            seen.setdefault(name, where)

    def _file_text(self, value: str, where: str) -> str | None:
        """`$file:path` read relative to the config; any other text as it is."""
        if not value.startswith(FILE_PREFIX):
            return value
        path = value[len(FILE_PREFIX) :].strip()
        try:
            return self.files.read(path)
        except (OSError, ValueError) as exc:
            self.problem(where, f"cannot read {path}: {exc}")
            return None

    def _template(self, value: Any, where: str, *, required: bool = True) -> str | None:
        if not isinstance(value, str) or (required and not value.strip()):
            self.problem(where, "write the text, or $file:path to read it from a file")
            return None
        text = self._file_text(value, where)
        if text is None:
            return None
        if required and not text.strip():
            self.problem(where, f"{value[len(FILE_PREFIX) :].strip()} is empty")
            return None
        return self._translated(text, where)

    def _translated(self, text: str, where: str) -> str:
        """`<<name>>` placeholders in our `{{name}}` syntax; an unknown format is a problem."""
        translated, unknown = from_angle_placeholders(text)
        for written in unknown:
            formats = ", ".join(ANGLE_FORMATS)
            self.problem(where, f"{written} has an unknown format; the formats are {formats}")
        return translated

    def _prompt_or_chat(self, value: Any, where: str) -> str | list[dict[str, str]] | None:
        """A prompt's text; or, when it is `$file:` of a JSON list, that list as checked messages (promptfoo's chat
        prompt files). Any other file is read as text, as before."""
        if isinstance(value, str) and value.startswith(FILE_PREFIX):
            path = value[len(FILE_PREFIX) :].strip()
            text = self._file_text(value, where)
            if text is None:
                return None
            if (chat := _json_list(text)) is not None:
                return self._checked_messages(chat, f"{where}: {path}")
        return self._template(value, where)

    def _messages(self, value: Any, where: str) -> list[dict[str, str]] | None:
        """`messages:` a list of {role, content} (each content text or `$file:`), or `$file:` a JSON list of them."""
        if isinstance(value, str) and value.startswith(FILE_PREFIX):
            path = value[len(FILE_PREFIX) :].strip()
            text = self._file_text(value, where)
            if text is None:
                return None
            if (chat := _json_list(text)) is None:
                self.problem(where, f"{path}: not a JSON list of messages, each {{role, content}}")
                return None
            return self._checked_messages(chat, f"{where}: {path}")
        if isinstance(value, list):
            # A content may itself be read from a file: `content: $file:few-shot/answer.txt`.
            value = [
                {**m, "content": self._file_text(m["content"], f"{where}: message {i}")}
                if isinstance(m, dict) and isinstance(m.get("content"), str)
                else m
                for i, m in enumerate(value, start=1)
            ]
            if any(isinstance(m, dict) and "content" in m and m["content"] is None for m in value):
                return None  # a file that could not be read, already reported
        return self._checked_messages(value, where)

    def _checked_messages(self, value: Any, where: str) -> list[dict[str, str]] | None:
        problems = message_problems(value)
        for problem in problems:
            self.problem(where, problem)
        if problems:
            return None
        messages = cleaned(value)
        for number, message in enumerate(messages, start=1):
            message["content"] = self._translated(message["content"], f"{where}: message {number}")
        return messages

    def _variables(self, value: Any, where: str) -> dict[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, dict) or not all(isinstance(k, str) and k.isidentifier() for k in value):
            self.problem(where, "a mapping of variable name → value (names are letters, digits and _)")
            return {}
        return value
