"""promptfoo's `prompts`: inline text, `file://` text files (several prompts split by a `---` line, as promptfoo
splits them), chat prompts (a JSON list of `{role, content}`: inline, a `.json` or `.yaml` file, or a `.jsonl` file
of one list per line), `{id | raw, label}` entries, or a mapping of file → label; each checked for Nunjucks beyond
`{{ var }}`.

A chat prompt becomes the lab's `messages:` prompt (compare.messages): promptfoo renders each string of a JSON prompt
with the vars and sends the list as the messages, which is what the lab's renderer does message by message. Any
other JSON prompt (an object, a list of something else, content parts) is refused: promptfoo would send its
rendered JSON as text, which nobody means.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

import yaml

from lab import safe_yaml

from .cases import FILE, USER_CODE_SUFFIXES
from .templates import unsupported_constructs

SEPARATOR = re.compile(r"^---$", re.MULTILINE)
TEXT_SUFFIXES = ("", ".txt", ".md", ".j2", ".njk", ".prompt")
CHAT_SUFFIXES = (".json", ".yaml", ".yml", ".jsonl")
ROLES = ("system", "user", "assistant")


@dataclass
class PromptSpec:
    index: int  # from 0, as promptfoo's prompt order
    label: str
    text: str  # the prompt as written (a chat prompt's JSON)
    messages: list[dict[str, str]] = field(default_factory=list)  # a chat prompt's messages

    @property
    def texts(self) -> list[str]:
        return [m["content"] for m in self.messages] if self.messages else [self.text]


def _json_value(text: str) -> tuple[bool, Any]:
    """(whether the text parses as JSON, the value): promptfoo renders such a prompt value by value."""
    stripped = text.strip()
    if not stripped.startswith(("[", "{")):
        return False, None
    try:
        return True, json.loads(stripped)
    except ValueError:
        return False, None


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
        found: list[tuple[str, str, str, Any]] = []  # (where, label, text, parsed chat value or None)
        for index, entry in enumerate(entries, start=1):
            found += self._entry(entry, f"prompts[{index}]")
        specs = []
        for where, label, text, chat in found:
            if chat is None:
                is_json, chat = _json_value(text)
                if not is_json:
                    chat = None
            messages = self._messages(chat, where) if chat is not None else []
            if chat is not None and messages is None:
                continue
            spec = PromptSpec(len(specs), label, text, messages)
            for content in spec.texts:
                for construct in unsupported_constructs(content):
                    self.problem(
                        where,
                        f"{construct} is Nunjucks beyond {{{{ var }}}}; only {{{{ var }}}} and {{{{var}}}} are filled "
                        "here (no template engine runs on your text)",
                    )
            specs.append(spec)
        return specs

    def _messages(self, value: Any, where: str) -> list[dict[str, str]] | None:
        """A chat prompt's messages; None (and a problem) for any other JSON."""
        if not isinstance(value, list) or not value:
            self.problem(where, "a JSON prompt other than a list of {role, content} messages is not supported")
            return None
        messages = []
        for number, message in enumerate(value, start=1):
            if not isinstance(message, dict) or set(message) - {"role", "content"}:
                self.problem(where, f"message {number}: a message has only role and content")
                return None
            if message.get("role") not in ROLES or not isinstance(message.get("content"), str):
                self.problem(
                    where, f"message {number}: role is system, user or assistant, and content is text (no parts)"
                )
                return None
            messages.append({"role": message["role"], "content": message["content"]})
        return messages

    def _entry(self, entry: Any, where: str) -> list[tuple[str, str, str, Any]]:
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
            return [(where, label or entry, entry, None)]
        path = entry[len(FILE) :].strip()
        suffix = PurePosixPath(path).suffix.lower()
        if path.endswith(USER_CODE_SUFFIXES) or ":" in path or any(c in path for c in "*?["):
            self.problem(where, f"{entry}: not supported (prompt functions run code; globs are refused)")
            return []
        if suffix not in TEXT_SUFFIXES + CHAT_SUFFIXES:
            self.problem(where, f"{path}: prompts are read from text files (.txt, .md …) or chat files (.json …)")
            return []
        try:
            text = self.files.read(path)
        except (OSError, ValueError) as exc:
            self.problem(where, f"cannot read {path}: {exc}")
            return []
        if suffix in CHAT_SUFFIXES:
            return self._chat_file(text, path, suffix, label, where)
        parts = [part.strip() for part in SEPARATOR.split(text) if part.strip()]
        if not parts:
            self.problem(where, f"{path} is empty")
        many = len(parts) > 1
        return [
            (
                f"{where} ({path}{f' part {n}' if many else ''})",
                label or f"{path}{f': {n}' if many else ''}",
                part,
                None,
            )
            for n, part in enumerate(parts, start=1)
        ]

    def _chat_file(self, text: str, path: str, suffix: str, label, where: str) -> list[tuple[str, str, str, Any]]:
        """A `.json`/`.yaml` file is one chat prompt; a `.jsonl` file one per line, as promptfoo reads them."""
        try:
            if suffix == ".jsonl":
                lines = [line for line in text.splitlines() if line.strip()]
                values = [json.loads(line) for line in lines]
            else:
                lines = [text]
                values = [json.loads(text) if suffix == ".json" else safe_yaml.load(text)]
        except (ValueError, yaml.YAMLError) as exc:
            self.problem(where, f"{path}: not valid {suffix[1:].upper()}: {exc}")
            return []
        many = len(values) > 1
        return [
            (
                f"{where} ({path}{f' line {n}' if many else ''})",
                label or f"{path}{f': {n}' if many else ''}",
                raw,
                value,
            )
            for n, (raw, value) in enumerate(zip(lines, values, strict=True), start=1)
        ]
