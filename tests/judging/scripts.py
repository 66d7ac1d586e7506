"""Judge replies for the fake server's scripts, written against answer texts rather than letters.

`relative({"alpha": (5, "why"), …})` scores the answer containing "alpha" 5; the server turns `{{letter:alpha}}`
into whatever letter that answer got in the call, so tests never need to know the shuffle.
"""

import json

from judging.prompts import metric_line
from judging.rubric import Metric


def metric_match(metric: Metric) -> str:
    """Text only the call about this metric contains (relative mode asks one metric per call)."""
    return f"Metric:\n{metric_line(metric)}"


def relative(scores: dict[str, tuple[int, str]], *, metric: Metric | None = None) -> dict:
    body = {f"{{{{letter:{word}}}}}": {"reason": reason, "score": score} for word, (score, reason) in scores.items()}
    reply = {"text": json.dumps({"scores": body})}
    return reply | ({"match": metric_match(metric)} if metric else {})


def pointwise(scores: dict[str, tuple[int, str]], *, about: str = "") -> dict:
    body = {name: {"reason": reason, "score": score} for name, (score, reason) in scores.items()}
    return {"text": json.dumps({"metrics": body})} | ({"match": about} if about else {})


def winner(choice: str, reason: str = "because") -> dict:
    """A head-to-head reply; `choice` is "letter:WORD", "shown:N" or "tie"."""
    value = "tie" if choice == "tie" else f"{{{{{choice}}}}}"
    return {"text": json.dumps({"reason": reason, "winner": value}), "match": "scored almost the same"}


def pairwise(winners: dict[str, str], *, match: str = "") -> dict:
    """A pairwise reply: metric → "letter:WORD", "shown:N" or "tie"."""
    body = {
        name: {"reason": f"{name} decided", "winner": "tie" if choice == "tie" else f"{{{{{choice}}}}}"}
        for name, choice in winners.items()
    }
    return {"text": json.dumps({"metrics": body})} | ({"match": match} if match else {})
