"""The model-graded assertions' own rules, pure (no call is made here): what the grader is asked, how its reply is
read, and how embeddings decide `similar` — each as promptfoo decides it (src/matchers.ts, src/assertions/):

- `llm-rubric`: the grader replies `{reason, pass, score}`; the assertion passes when the grader says pass and, with
  a `threshold`, the score reaches it (promptfoo's matchesLlmRubric). A missing score is 1 for pass, 0 for fail.
- `model-graded-closedqa`: the grader answers Y or N to "does the answer meet the criterion?" (matchesClosedQa:
  pass exactly on Y); score 1 or 0.
- `g-eval`: the grader first writes evaluation steps for the criteria, then scores the answer 0–10 by them; the
  score is that over 10, and the assertion passes at `threshold` (default 0.7, promptfoo's gEval.ts). A list of
  criteria is graded one by one and their scores averaged.
- `similar`: cosine similarity of the answer's and the value's embeddings ≥ `threshold` (default 0.75); with a
  list, any value that passes passes, else the lowest score (promptfoo's similar.ts).

`not-` inverts the pass and reports 1 − score, as promptfoo does for `not-similar`. The grader is shown the rubric,
the request and the answer — never which model wrote it. The prompt text is the lab's own.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from lab.assertions.spec import AssertionSpec

G_EVAL_THRESHOLD = 0.7
SIMILAR_THRESHOLD = 0.75
G_EVAL_MAX = 10

SYSTEM = (
    "You grade one answer against criteria a team wrote. You are not told who or what wrote the answer. Judge "
    "only whether the answer meets the criteria. Reply with one JSON object exactly as instructed and nothing else."
)
REASON = {"type": "string", "description": "one or two sentences explaining the grade"}


class GraderReplyError(ValueError):
    """The grader's reply cannot be read; the message says why (the component is then "not graded")."""


@dataclass(frozen=True)
class GraderPrompt:
    messages: list[dict[str, str]]
    schema: dict


def _block(tag: str, text: str) -> str:
    # An answer quoting our tags must not close its own block and speak as the instructions.
    safe = text.replace(f"</{tag}>", f"</\u200b{tag}>")
    return f"<{tag}>\n{safe}\n</{tag}>"


def _ask(text: str, schema: dict) -> GraderPrompt:
    return GraderPrompt(
        messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": text}], schema=schema
    )


def rubric_prompt(rubric: str, answer: str) -> GraderPrompt:
    """llm-rubric: the rubric and the answer (promptfoo's default rubric prompt shows only these two)."""
    schema = {
        "type": "object",
        "properties": {"reason": REASON, "pass": {"type": "boolean"}, "score": {"type": "number"}},
        "required": ["reason", "pass", "score"],
        "additionalProperties": False,
    }
    text = (
        "Grade the answer against the rubric. Say whether it passes, and give a score from 0.0 (does not meet the "
        f"rubric at all) to 1.0 (meets it fully).\n\n{_block('rubric', rubric)}\n\n{_block('answer', answer)}\n\n"
        'Reply as {"reason": "…", "pass": true or false, "score": a number from 0.0 to 1.0}.'
    )
    return _ask(text, schema)


def closedqa_prompt(request: str, criterion: str, answer: str) -> GraderPrompt:
    """model-graded-closedqa: the request, the criterion and the answer; a Y or N verdict."""
    schema = {
        "type": "object",
        "properties": {"reason": REASON, "verdict": {"type": "string", "enum": ["Y", "N"]}},
        "required": ["reason", "verdict"],
        "additionalProperties": False,
    }
    text = (
        "Does the answer to the request meet the criterion? Reason step by step, then give the verdict: Y if it "
        f"meets the criterion, N if it does not.\n\n{_block('request', request)}\n\n"
        f"{_block('criterion', criterion)}\n\n{_block('answer', answer)}\n\n"
        'Reply as {"reason": "…", "verdict": "Y" or "N"}.'
    )
    return _ask(text, schema)


def g_eval_steps_prompt(criteria: str) -> GraderPrompt:
    """g-eval, first call: evaluation steps written from the criteria."""
    schema = {
        "type": "object",
        "properties": {"steps": {"type": "array", "items": {"type": "string"}}},
        "required": ["steps"],
        "additionalProperties": False,
    }
    text = (
        "Write three to five concrete steps an evaluator should follow to check an answer against these criteria."
        f'\n\n{_block("criteria", criteria)}\n\nReply as {{"steps": ["…", "…"]}}.'
    )
    return _ask(text, schema)


def g_eval_score_prompt(criteria: str, steps: Sequence[str], request: str, answer: str) -> GraderPrompt:
    """g-eval, second call: the answer scored 0–10 by the steps."""
    schema = {
        "type": "object",
        "properties": {"reason": REASON, "score": {"type": "integer", "minimum": 0, "maximum": G_EVAL_MAX}},
        "required": ["reason", "score"],
        "additionalProperties": False,
    }
    listed = "\n".join(f"{n}. {step}" for n, step in enumerate(steps, start=1))
    text = (
        f"Score the answer to the request from 0 (fails the criteria) to {G_EVAL_MAX} (meets them fully), "
        f"following the evaluation steps.\n\n{_block('criteria', criteria)}\n\n{_block('steps', listed)}\n\n"
        f"{_block('request', request)}\n\n{_block('answer', answer)}\n\n"
        f'Reply as {{"reason": "…", "score": an integer from 0 to {G_EVAL_MAX}}}.'
    )
    return _ask(text, schema)


def reply_json(text: str) -> dict[str, Any]:
    """The grader's JSON object (one code fence around it at most)."""
    body = text.strip()
    if body.startswith("```"):
        body = body.split("\n", 1)[1] if "\n" in body else ""
        body = body.rsplit("```", 1)[0]
    try:
        value = json.loads(body)
    except json.JSONDecodeError:
        raise GraderReplyError(f"The grader's reply is not JSON: {text[:200]!r}") from None
    if not isinstance(value, dict):
        raise GraderReplyError("The grader's reply is not a JSON object.")
    return value


def _number(value: Any) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _inverted(spec: AssertionSpec, passed: bool, score: float, reason: str) -> tuple[bool, float, str]:
    return (not passed, 1.0 - score, reason) if spec.inverse else (passed, score, reason)


def rubric_result(spec: AssertionSpec, reply: dict[str, Any]) -> tuple[bool, float, str]:
    passed, score = reply.get("pass"), _number(reply.get("score"))
    if not isinstance(passed, bool):
        if score is None:
            raise GraderReplyError("The grader's reply has neither `pass` nor `score`.")
        passed = score >= (spec.threshold if spec.threshold is not None else 0.5)
    if score is None:
        score = 1.0 if passed else 0.0
    if spec.threshold is not None and score < spec.threshold:
        passed = False
    return _inverted(spec, passed, score, str(reply.get("reason", "")))


def closedqa_result(spec: AssertionSpec, reply: dict[str, Any]) -> tuple[bool, float, str]:
    verdict = str(reply.get("verdict", "")).strip().upper()
    if verdict not in {"Y", "N"}:
        raise GraderReplyError("The grader's verdict is neither Y nor N.")
    passed = verdict == "Y"
    return _inverted(spec, passed, 1.0 if passed else 0.0, str(reply.get("reason", "")))


def g_eval_steps(reply: dict[str, Any]) -> list[str]:
    steps = reply.get("steps")
    if not isinstance(steps, list) or not steps or not all(isinstance(step, str) for step in steps):
        raise GraderReplyError("The grader's reply has no list of evaluation steps.")
    return steps


def g_eval_score(reply: dict[str, Any]) -> tuple[float, str]:
    """One criterion's score over 10, and the grader's reason."""
    raw = _number(reply.get("score"))
    if raw is None or not 0 <= raw <= G_EVAL_MAX:
        raise GraderReplyError(f"The grader's score is not a number from 0 to {G_EVAL_MAX}.")
    return raw / G_EVAL_MAX, str(reply.get("reason", ""))


def g_eval_result(spec: AssertionSpec, scored: Sequence[tuple[float, str]]) -> tuple[bool, float, str]:
    """The criteria's mean score against the threshold (promptfoo averages a list of criteria)."""
    threshold = spec.threshold if spec.threshold is not None else G_EVAL_THRESHOLD
    score = sum(s for s, _ in scored) / len(scored)
    return _inverted(spec, score >= threshold, score, "\n\n".join(reason for _, reason in scored))


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    if len(a) != len(b) or not a:
        raise GraderReplyError("The embeddings differ in length.")
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    if norm == 0:
        raise GraderReplyError("An embedding is all zeros.")
    return sum(x * y for x, y in zip(a, b, strict=True)) / norm


def similar_result(
    spec: AssertionSpec, answer: Sequence[float], references: Sequence[Sequence[float]]
) -> tuple[bool, float, str]:
    """`answer`'s embedding against each value's; with several values, the first that passes decides."""
    threshold = spec.threshold if spec.threshold is not None else SIMILAR_THRESHOLD
    lowest = math.inf
    for reference in references:
        similarity = cosine(answer, reference)
        passed = similarity < threshold if spec.inverse else similarity >= threshold
        score = 1 - similarity if spec.inverse else similarity
        relation = "greater than or equal to" if similarity >= threshold else "less than"
        reason = f"Similarity {similarity:.2f} is {relation} threshold {threshold:g}"
        if passed or len(references) == 1:
            return passed, score, reason
        lowest = min(lowest, score)
    return False, lowest, "None of the provided values met the similarity threshold"
