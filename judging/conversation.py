"""What a judge sees of a conversation's later turn: the conversation, anonymised, and the answer(s) judged.

Each column of a conversation has its own history (its own earlier answers), so each answer is judged with the
request it was written for: the first turn's messages, then that column's own answers and the user's follow-ups,
under the roles "User" and "Assistant" only — never a model name, a variant label or a position. A judge set to
judge the last turn (the default) reads the conversation up to the last follow-up as the request and the last
answer as the response; set to judge the whole conversation, it reads the first turn's messages as the request and
every answer and follow-up after them as the response. A first turn is judged as any round
(Output.judge_request).
"""

from __future__ import annotations

from compare.models import Output
from compare.rounds.continuing import split_turns

from .rubric import ConversationScope

_HEADINGS = {"system": "System prompt", "user": "User", "assistant": "Assistant"}


def judged_texts(output: Output, *, turn: int, scope: str) -> tuple[str, str]:
    """The request and the response the judge is shown for this answer of a round at `turn`."""
    if turn <= 1 or not output.messages:
        return output.judge_request(), output.text
    opening, since = split_turns(output.messages, turn)
    if scope == ConversationScope.WHOLE:
        return transcript(opening), transcript([*since, {"role": "assistant", "content": output.text}])
    return (
        f"{transcript(opening)}\n\n{transcript(since)}\n\n(The response judged is the assistant's reply to this last "
        "user message.)",
        output.text,
    )


def transcript(messages: list[dict]) -> str:
    """Messages as a judge reads them: each under its role's heading, in order."""
    return "\n\n".join(f"{_HEADINGS.get(m.get('role'), 'User')}:\n{_text(m.get('content'))}" for m in messages)


def _text(content) -> str:
    """A message's text; of a message in parts (text and images), its text parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(part.get("text", "") for part in content if isinstance(part, dict) and part.get("text"))
    return ""
