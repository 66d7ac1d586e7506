"""Scripted replies: a test queues the exact replies a scenario gives, in order, e.g. an LLM judge's verdicts.

`POST /_script {"model": "<model name as sent>", "replies": [...]}` appends replies to that scenario's queue;
each request takes the first reply whose `match` (if any) occurs in its prompt, and answers with it instead of
the scenario's usual text. A reply is `{"text": "..."}` or `{"status": 400, "message": "..."}` (an HTTP error
in the wire's shape). Requests finding no reply behave as the scenario says.

Reply texts can point at the answers of a judge prompt, which come in `<answer letter="A">…</answer>` blocks
whose letters the judge shuffles: `{{letter:WORD}}` becomes the letter of the block containing WORD and
`{{shown:N}}` the letter of the N-th block shown (from 1), so a script says "the answer about tea wins" or
"the first one shown wins" without knowing the letters in advance.
"""

from __future__ import annotations

import re
import threading
from typing import Any

ANSWER_BLOCK = re.compile(r'<answer letter="([A-Z]+)">(.*?)</answer>', re.DOTALL)
REFERENCE = re.compile(r"\{\{(letter|shown):([^}]+)\}\}")
UNKNOWN_LETTER = "?"


def resolve(text: str, prompt: str) -> str:
    """Replace `{{letter:WORD}}` and `{{shown:N}}` with letters read from the prompt's answer blocks."""
    blocks = ANSWER_BLOCK.findall(prompt)

    def replace(match: re.Match) -> str:
        kind, argument = match.group(1), match.group(2)
        if kind == "letter":
            return next((letter for letter, body in blocks if argument in body), UNKNOWN_LETTER)
        index = int(argument) - 1 if argument.isdigit() else -1
        return blocks[index][0] if 0 <= index < len(blocks) else UNKNOWN_LETTER

    return REFERENCE.sub(replace, text)


def check_reply(reply: Any) -> dict:
    """A reply as queued; raises ValueError saying what is wrong with it."""
    if not isinstance(reply, dict) or ("text" in reply) == ("status" in reply):
        raise ValueError('A scripted reply is {"text": …} or {"status": …, "message": …}, with an optional "match".')
    if "status" in reply and not (isinstance(reply["status"], int) and 400 <= reply["status"] <= 599):
        raise ValueError("A scripted status is an HTTP error status (400–599).")
    return {"match": str(reply.get("match") or ""), **reply}


class Scripts:
    """The queues of scripted replies, per scenario key (the server's loop and its thread may both touch them)."""

    def __init__(self) -> None:
        self._queues: dict[str, list[dict]] = {}
        self._lock = threading.Lock()

    def add(self, key: str, replies: list[Any]) -> int:
        checked = [check_reply(reply) for reply in replies]
        with self._lock:
            queue = self._queues.setdefault(key, [])
            queue.extend(checked)
            return len(queue)

    def take(self, key: str, prompt: str) -> dict | None:
        """The first queued reply for `key` matching `prompt`, removed from the queue, its text resolved."""
        with self._lock:
            queue = self._queues.get(key) or []
            reply = next((r for r in queue if r["match"] in prompt), None)
            if reply is None:
                return None
            queue.remove(reply)
        if "text" in reply:
            return {**reply, "text": resolve(str(reply["text"]), prompt)}
        return reply

    def clear(self) -> None:
        with self._lock:
            self._queues.clear()
