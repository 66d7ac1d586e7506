"""promptfoo's `prompts`: inline text, `file://` text files (several prompts split by a `---` line, as promptfoo
splits them), `{id | raw, label}` entries, or a mapping of file → label; each checked for Nunjucks beyond `{{ var }}`.

Chat prompts (a JSON list of `{role, content}`, inline or in a `.json` file) need the lab's `messages:` prompts;
until those exist here they are refused naming the file, rather than sent as one user message (which promptfoo
would not do). So is any prompt that parses as JSON, which promptfoo renders value by value.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from .cases import FILE, USER_CODE_SUFFIXES
from .templates import unsupported_constructs

SEPARATOR = re.compile(r"^---$", re.MULTILINE)
TEXT_SUFFIXES = ("", ".txt", ".md", ".j2", ".njk", ".prompt")


@dataclass
class PromptSpec:
    index: int  # from 0, as promptfoo's prompt order
    label: str
    text: str


def _is_json(text: str) -> bool:
    """promptfoo renders a prompt that parses as JSON value by value (a chat prompt is a JSON list of messages)."""
    stripped = text.strip()
    if not stripped.startswith(("[", "{")):
        return False
    try:
        json.loads(stripped)
    except ValueError:
        return False
    return True


class PromptReader:
    def __init__(self, files, problem):
        self.files, self.problem = files, problem

    def prompts(self, value: Any) -> list[PromptSpec]:
        if value is None:
            self.problem("prompts", "missing; give at least one prompt")
            return []
        if isinstance(value, dict):  # {file://a.txt: label}
            value = [{"id": key, "label": label} for key, label in value.items()]
        entries = value if isinstance(value, list) else [value]
        found: list[tuple[str, str, str]] = []  # (where, label, text)
        for index, entry in enumerate(entries, start=1):
            found += self._entry(entry, f"prompts[{index}]")
        specs = []
        for where, label, text in found:
            for construct in unsupported_constructs(text):
                self.problem(
                    where,
                    f"{construct} is Nunjucks beyond {{{{ var }}}}; only {{{{ var }}}} and {{{{var}}}} are filled "
                    "here (no template engine runs on your text)",
                )
            if _is_json(text):
                self.problem(where, "a JSON prompt (a chat prompt is a JSON list of messages) is not supported yet")
                continue
            specs.append(PromptSpec(len(specs), label, text))
        return specs

    def _entry(self, entry: Any, where: str) -> list[tuple[str, str, str]]:
        label = None
        if isinstance(entry, dict):
            for key in sorted(set(entry) - {"id", "raw", "label"}):
                self.problem(where, f"{key}: not supported; a prompt has id (or raw) and label")
            label = entry.get("label") if isinstance(entry.get("label"), str) else None
            entry = entry.get("raw", entry.get("id"))
        if not isinstance(entry, str) or not entry.strip():
            self.problem(where, "a prompt is text, file://path, or {id: file://path, label}")
            return []
        if not entry.startswith(FILE):
            return [(where, label or entry, entry)]
        path = entry[len(FILE) :].strip()
        suffix = PurePosixPath(path).suffix.lower()
        if path.endswith(USER_CODE_SUFFIXES) or ":" in path or any(c in path for c in "*?["):
            self.problem(where, f"{entry}: not supported (prompt functions run code; globs are refused)")
            return []
        if suffix in (".json", ".yaml", ".yml", ".jsonl"):
            self.problem(where, f"{path}: a chat prompt file (JSON messages) is not supported yet")
            return []
        if suffix not in TEXT_SUFFIXES:
            self.problem(where, f"{path}: prompts are read from text files (.txt, .md …)")
            return []
        try:
            text = self.files.read(path)
        except (OSError, ValueError) as exc:
            self.problem(where, f"cannot read {path}: {exc}")
            return []
        parts = [part.strip() for part in SEPARATOR.split(text) if part.strip()]
        if not parts:
            self.problem(where, f"{path} is empty")
        many = len(parts) > 1
        return [
            (f"{where} ({path}{f' part {n}' if many else ''})", label or f"{path}{f': {n}' if many else ''}", part)
            for n, part in enumerate(parts, start=1)
        ]
