"""The judge's prompts and the JSON schemas of its replies, one builder per kind of call.

What the judge sees is deliberately little: the request, the answers under letters (in the order given, which
the caller shuffles per call), the metrics and the scale, and the reference answer when the round's dataset row
has one. Never a model name, a variant label or a position
number. A custom evaluator prompt replaces the instructions; the reply format is always appended, so replies
stay strict JSON.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from lab.templating import render

from .rubric import Metric, Rubric, Scale

SYSTEM = (
    "You are an impartial judge of answers written for a request. The answers are identified only by letters: "
    "you do not know who or what wrote them, and neither the letters nor the order the answers appear in mean "
    "anything. Judge the content against the criteria given, not its length or position. Reply with one JSON "
    "object exactly as instructed and nothing else."
)
TIE = "tie"
REASON = {"type": "string", "description": "one or two sentences explaining the judgement"}
# An answer quoting our tags must not be able to close its own block and speak as the instructions.
_TAG = re.compile(r"<(/?)(answer|request|response|reference)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Shown:
    """One answer as the judge sees it: a letter, the request it answered and its text."""

    letter: str
    prompt: str
    text: str
    reference: str = ""  # a reference answer the team chose (the round's dataset row `reference`), or ""


@dataclass(frozen=True)
class JudgePrompt:
    messages: list[dict[str, str]]
    schema: dict


def letter_for(index: int) -> str:
    """A, B, … Z, then AA, AB, … for the rare experiment with more than 26 answers."""
    return chr(65 + index) if index < 26 else letter_for(index // 26 - 1) + chr(65 + index % 26)


def _defanged(text: str) -> str:
    return _TAG.sub(lambda m: f"<{m.group(1)}\u200b{m.group(2)}", text)


def _request_block(shown: Sequence[Shown]) -> str:
    prompts = {answer.prompt for answer in shown}
    if len(prompts) == 1:
        return f"<request>\n{_defanged(shown[0].prompt)}\n</request>"
    return "Each answer below comes with the request it was written for."


def _reference_block(shown: Sequence[Shown]) -> str:
    """The round's reference answer (every answer shown comes from one round, so they share it), or ""."""
    reference = next((answer.reference for answer in shown if answer.reference), "")
    return f"<reference>\n{_defanged(reference)}\n</reference>" if reference else ""


def _compared(request: str, reference: str) -> str:
    """The request, and after it the reference answer with a word on how to use it, when there is one."""
    if not reference:
        return request
    return (
        "A reference answer the team judged good is given for comparison; an answer need not match its "
        f"wording.\n\n{request}\n\n{reference}"
    )


def _answers_block(shown: Sequence[Shown]) -> str:
    same_request = len({answer.prompt for answer in shown}) == 1
    blocks = []
    for answer in shown:
        request = "" if same_request else f"<request>\n{_defanged(answer.prompt)}\n</request>\n"
        body = f"<response>\n{_defanged(answer.text)}\n</response>" if not same_request else _defanged(answer.text)
        blocks.append(f'<answer letter="{answer.letter}">\n{request}{body}\n</answer>')
    return "\n\n".join(blocks)


def scale_text(rubric: Rubric) -> str:
    if rubric.scale == Scale.BINARY:
        return "0 or 1: 1 when the answer matches the metric's description of its best, 0 when it does not."
    return (
        f"An integer from {rubric.low} to {rubric.high}: {rubric.low} matches the metric's lowest description, "
        f"{rubric.high} its highest, and the values between are in proportion."
    )


def metric_line(metric: Metric) -> str:
    return f"- {metric.name} (weight {metric.weight:g}). Lowest: {metric.low} Highest: {metric.high}"


def metrics_text(metrics: Sequence[Metric]) -> str:
    return "\n".join(metric_line(metric) for metric in metrics)


def _body(
    rubric: Rubric, default: str, *, request: str, response: str, scale: str, metrics: str, reference: str = ""
) -> str:
    if not rubric.prompt.strip():
        return default
    values = {"prompt": request, "response": response, "scoring_scale": scale, "metrics": metrics}
    values["reference"] = reference
    return render(rubric.prompt, values).text


def _instructed(body: str, how: str) -> str:
    """What a pairwise or head-to-head call asks always reaches the judge: a custom prompt that has no
    {{scoring_scale}} (where it is filled in) gets it after its own text."""
    return body if how in body else f"{body}\n\n{how}"


def _messages(user: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


def _closed(properties: dict, required: Sequence[str] | None = None) -> dict:
    # Every object closed and every property required: OpenAI's strict mode accepts nothing less.
    return {
        "type": "object",
        "properties": properties,
        "required": list(required if required is not None else properties),
        "additionalProperties": False,
    }


def _score_schema(rubric: Rubric) -> dict:
    # An enum rather than minimum/maximum: every provider's schema mode supports enums.
    return _closed({"reason": REASON, "score": {"type": "integer", "enum": list(range(rubric.low, rubric.high + 1))}})


def relative_prompt(rubric: Rubric, metric: Metric, shown: Sequence[Shown]) -> JudgePrompt:
    """All answers side by side, scored on one metric."""
    letters = sorted(answer.letter for answer in shown)
    request, answers, reference = _request_block(shown), _answers_block(shown), _reference_block(shown)
    default = (
        f"Score each answer to the request on one metric.\n\n{_compared(request, reference)}\n\n{answers}\n\n"
        f"Metric:\n{metric_line(metric)}\n\nScoring scale: {scale_text(rubric)}"
    )
    body = _body(
        rubric,
        default,
        request=request,
        response=answers,
        scale=scale_text(rubric),
        metrics=metric_line(metric),
        reference=reference,
    )
    reply = (
        '\n\nReply with JSON only: {"scores": {"<letter>": {"reason": "…", "score": <score>}}}, with each of the '
        f"letters {', '.join(answer.letter for answer in shown)} exactly once."
    )
    schema = _closed({"scores": _closed({letter: _score_schema(rubric) for letter in letters})})
    return JudgePrompt(_messages(body + reply), schema)


def pointwise_prompt(rubric: Rubric, answer: Shown) -> JudgePrompt:
    """One answer on its own, scored on every metric."""
    request = f"<request>\n{_defanged(answer.prompt)}\n</request>"
    response = f"<answer>\n{_defanged(answer.text)}\n</answer>"
    reference = _reference_block((answer,))
    metrics = metrics_text(rubric.metrics)
    default = (
        f"Score the answer to the request on each metric.\n\n{_compared(request, reference)}\n\n{response}\n\n"
        f"Metrics:\n{metrics}\n\nScoring scale: {scale_text(rubric)}"
    )
    body = _body(
        rubric,
        default,
        request=request,
        response=response,
        scale=scale_text(rubric),
        metrics=metrics,
        reference=reference,
    )
    names = [metric.name for metric in rubric.metrics]
    reply = (
        '\n\nReply with JSON only: {"metrics": {"<metric>": {"reason": "…", "score": <score>}}}, with each of the '
        f"metrics {', '.join(names)} exactly once."
    )
    schema = _closed({"metrics": _closed({name: _score_schema(rubric) for name in names})})
    return JudgePrompt(_messages(body + reply), schema)


def _choices(first: Shown, second: Shown) -> str:
    return f'"{first.letter}", "{second.letter}" or "{TIE}"'


def _winner_schema(letters: Sequence[str]) -> dict:
    return _closed({"reason": REASON, "winner": {"type": "string", "enum": [*sorted(letters), TIE]}})


def pairwise_prompt(rubric: Rubric, first: Shown, second: Shown) -> JudgePrompt:
    """Two answers, the better one named per metric (asked again with the order swapped by the caller)."""
    shown = (first, second)
    request, answers, reference = _request_block(shown), _answers_block(shown), _reference_block(shown)
    metrics = metrics_text(rubric.metrics)
    how = f'For each metric, name the better answer by its letter, or "{TIE}" when neither is better.'
    default = (
        f"Compare the two answers to the request.\n\n{_compared(request, reference)}\n\n{answers}\n\n"
        f"Metrics:\n{metrics}\n\n{how}"
    )
    body = _instructed(
        _body(rubric, default, request=request, response=answers, scale=how, metrics=metrics, reference=reference),
        how,
    )
    names = [metric.name for metric in rubric.metrics]
    reply = (
        '\n\nReply with JSON only: {"metrics": {"<metric>": {"reason": "…", "winner": "<letter or tie>"}}}, with '
        f"each of the metrics {', '.join(names)} exactly once; a winner is {_choices(first, second)}."
    )
    letters = [first.letter, second.letter]
    schema = _closed({"metrics": _closed({name: _winner_schema(letters) for name in names})})
    return JudgePrompt(_messages(body + reply), schema)


def head_to_head_prompt(rubric: Rubric, first: Shown, second: Shown) -> JudgePrompt:
    """The top two scored almost the same: one overall decision (asked in both orders by the caller)."""
    shown = (first, second)
    request, answers, reference = _request_block(shown), _answers_block(shown), _reference_block(shown)
    metrics = metrics_text(rubric.metrics)
    how = (
        "These two answers scored almost the same. Decide which is better overall, weighing the metrics by "
        f'their weights; answer "{TIE}" only if neither is better.'
    )
    default = f"{how}\n\n{_compared(request, reference)}\n\n{answers}\n\nMetrics:\n{metrics}"
    body = _instructed(
        _body(rubric, default, request=request, response=answers, scale=how, metrics=metrics, reference=reference),
        how,
    )
    choices = _choices(first, second)
    reply = f'\n\nReply with JSON only: {{"reason": "…", "winner": "<letter or tie>"}}; the winner is {choices}.'
    return JudgePrompt(_messages(body + reply), _winner_schema([first.letter, second.letter]))
