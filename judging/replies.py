"""Reading the judge's replies strictly: JSON only, every letter or metric exactly once, scores on the scale.

Each reader returns what it could read per key (a letter's score, a metric's score or winner) and, per key, why
it could not, so a caller can retry and in the end drop only what still fails.

The shapes each kind of prompt expects (docs/experiments.md says the same):

- pointwise (the judge's own prompt): {"metrics": {metric: {"reason", "score"}}}
- relative: {"scores": {letter: {"reason", "score"}}}; pairwise: {"metrics": {metric: {"reason", "winner"}}};
  head-to-head: {"reason", "winner"}
- a custom prompt on one metric (Toor's evaluator prompts) may also reply as Toor's evaluators do: binary
  {"passed": true, "reasoning": "…"}, scaled {"score": 4, "reasoning": "…"}

A lenient judge (an option, strict by default) reads the largest JSON object in the reply, so prose around it is
ignored; strict reading takes JSON only, with one surrounding code fence at most.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .prompts import TIE
from .rubric import Rubric

_FENCE = re.compile(r"^```(?:json)?\s*\n(.*)\n```$", re.DOTALL)


class BadReply(ValueError):
    """The reply as a whole cannot be read (not JSON, not the expected shape); the message says why."""


@dataclass(frozen=True)
class Scored:
    raw: int
    reason: str


@dataclass(frozen=True)
class Picked:
    winner: str  # a letter or TIE
    reason: str


@dataclass
class Read:
    """What one reply gave: a value per key it answered well, a problem per key it did not."""

    values: dict[str, Any]
    problems: dict[str, str]

    def problem(self, key: str) -> str:
        """Why `key` has no value: its own problem, else the reply's as a whole ("*"), else that none was usable."""
        return self.problems.get(key) or self.problems.get("*") or "no usable reply"


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # json.loads keeps the last of duplicate keys silently; "exactly once" means a duplicate is an error.
    keys = [key for key, _ in pairs]
    if len(set(keys)) != len(keys):
        repeated = next(key for key in keys if keys.count(key) > 1)
        raise BadReply(f'"{repeated}" appears more than once.')
    return dict(pairs)


def parse_json(text: str, *, lenient: bool = False) -> dict[str, Any]:
    """The reply's JSON object; a single surrounding code fence is tolerated, any other text is not, unless
    `lenient`: then the largest JSON object anywhere in the reply."""
    stripped = text.strip()
    if match := _FENCE.match(stripped):
        stripped = match.group(1).strip()
    try:
        data = json.loads(stripped, object_pairs_hook=_no_duplicates)
    except json.JSONDecodeError as exc:
        found = largest_object(text) if lenient else None
        if found is None:
            raise BadReply(f"The reply is not valid JSON ({exc.msg} at character {exc.pos}).") from None
        data = found
    if not isinstance(data, dict):
        raise BadReply("The reply is not a JSON object.")
    return data


def largest_object(text: str) -> dict[str, Any] | None:
    """The longest span of `text` that parses as a JSON object, or None: what a lenient judge reads."""
    decoder = json.JSONDecoder(object_pairs_hook=_no_duplicates)
    best, best_length = None, 0
    for start in (i for i, char in enumerate(text) if char == "{"):
        try:
            value, end = decoder.raw_decode(text, start)
        except (json.JSONDecodeError, BadReply):
            continue
        if isinstance(value, dict) and end - start > best_length:
            best, best_length = value, end - start
    return best


def _section(data: dict[str, Any], name: str) -> dict[str, Any]:
    section = data.get(name)
    if not isinstance(section, dict):
        raise BadReply(f'The reply has no "{name}" object.')
    return section


def _score(entry: Any, rubric: Rubric) -> Scored | str:
    if not isinstance(entry, dict):
        return "not an object with a reason and a score"
    score = entry.get("score")
    # JSON true/false are ints in Python; a score must be a number written as one.
    if isinstance(score, bool) or not isinstance(score, int | float) or score != int(score):
        return f"the score {json.dumps(score)} is not a whole number"
    if not rubric.low <= score <= rubric.high:
        return f"the score {int(score)} is outside {rubric.low}–{rubric.high}"
    return Scored(int(score), str(entry.get("reason") or "").strip())


def _keyed(section: dict[str, Any], expected: Sequence[str], what: str, read) -> Read:
    result = Read(values={}, problems={})
    for key in expected:
        if key not in section:
            result.problems[key] = f"{what} {key} is missing"
            continue
        value = read(section[key])
        if isinstance(value, str):
            result.problems[key] = f"{what} {key}: {value}"
        else:
            result.values[key] = value
    unknown = sorted(set(section) - set(expected))
    if unknown:
        # An unknown key means the judge scored something it was not shown: nothing in this reply is trusted.
        message = f"the reply names {what} {', '.join(unknown)}, which it was not given"
        return Read(values={}, problems=dict.fromkeys(expected, message))
    return result


def read_letter_scores(text: str, letters: Sequence[str], rubric: Rubric) -> Read:
    """A relative reply: {"scores": {letter: {"reason", "score"}}}. One bad letter spoils the whole metric."""
    read = _keyed(
        _section(parse_json(text, lenient=rubric.lenient), "scores"),
        letters,
        "letter",
        lambda entry: _score(entry, rubric),
    )
    if read.problems:
        raise BadReply("; ".join(read.problems.values()) + ".")
    return read


def read_metric_scores(text: str, rubric: Rubric) -> Read:
    """A pointwise reply: {"metrics": {metric: {"reason", "score"}}}, read metric by metric; for a custom prompt on
    one metric also Toor's shapes, {"passed", "reasoning"} (binary) and {"score", "reasoning"}."""
    names = [metric.name for metric in rubric.metrics]
    data = parse_json(text, lenient=rubric.lenient)
    if "metrics" not in data and rubric.prompt and len(names) == 1:
        return _keyed({names[0]: toor_entry(data, rubric)}, names, "metric", lambda entry: _score(entry, rubric))
    return _keyed(_section(data, "metrics"), names, "metric", lambda entry: _score(entry, rubric))


def toor_entry(data: dict[str, Any], rubric: Rubric) -> dict[str, Any]:
    """Toor's reply as one metric's {"score", "reason"}: `passed` true/false is the binary scale's 1/0."""
    reason = data.get("reasoning", data.get("reason", ""))
    if rubric.scale == "binary" and "passed" in data:
        passed = data["passed"]
        if not isinstance(passed, bool):
            raise BadReply(f'The reply\'s "passed" is {json.dumps(passed)}, not true or false.')
        return {"score": rubric.high if passed else rubric.low, "reason": reason}
    if "score" not in data:
        expects = '"passed" and "reasoning"' if rubric.scale == "binary" else '"score" and "reasoning"'
        raise BadReply(f'The reply has no "metrics" object, nor {expects}.')
    return {"score": data["score"], "reason": reason}


def _pick(entry: Any, letters: Sequence[str]) -> Picked | str:
    if not isinstance(entry, dict):
        return "not an object with a reason and a winner"
    winner = entry.get("winner")
    if winner not in (*letters, TIE):
        return f'the winner {json.dumps(winner)} is not {", ".join(letters)} or "{TIE}"'
    return Picked(winner, str(entry.get("reason") or "").strip())


def read_metric_winners(text: str, letters: Sequence[str], rubric: Rubric) -> Read:
    """A pairwise reply: {"metrics": {metric: {"reason", "winner"}}}, read metric by metric."""
    names = [metric.name for metric in rubric.metrics]
    data = parse_json(text, lenient=rubric.lenient)
    return _keyed(_section(data, "metrics"), names, "metric", lambda entry: _pick(entry, letters))


def read_winner(text: str, letters: Sequence[str], *, lenient: bool = False) -> Picked:
    """A head-to-head reply: {"reason", "winner"}."""
    picked = _pick(parse_json(text, lenient=lenient), letters)
    if isinstance(picked, str):
        raise BadReply(f"The reply's {picked}.")
    return picked
