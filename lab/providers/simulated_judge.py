"""What a simulated judge replies: an instance of the reply's JSON schema (a judge call always gives one), its
scores, winners and categories drawn from the seeded generator, and its reasons written afterwards for those
values — naming the answer's letter, the metric and the request's subject, never a piece of the prompt's reply
template (`<score>`, `{"reason": …}`)."""

from __future__ import annotations

import random
import re
from typing import Any

REQUEST = re.compile(r"<request>\s*(.*?)\s*</request>", re.DOTALL)
REASON_KEYS = ("reason", "reasoning")
# Characters of the judge prompt's reply template; a subject quoted in a reason never carries them.
TEMPLATE_CHARACTERS = re.compile(r"[<>{}\[\]\"“”`]")


def judge_reply(schema: dict[str, Any], rng: random.Random, prompt: str, topic_of) -> Any:
    """A value of `schema` for the judge call whose user message is `prompt`; `topic_of` names a request's subject."""
    found = REQUEST.search(prompt)
    subject = TEMPLATE_CHARACTERS.sub("", topic_of(found.group(1))).strip() if found else ""
    return _value(schema, rng, subject or "the request", context={})


def _value(schema: dict[str, Any], rng: random.Random, subject: str, context: dict[str, str], key: str = "") -> Any:
    if "enum" in schema:
        return rng.choice(schema["enum"])
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        return _object(schema.get("properties") or {}, rng, subject, context, key)
    if kind == "array":
        return [_value(schema.get("items") or {}, rng, subject, context)]
    if kind == "integer":
        return rng.randint(int(schema.get("minimum", 1)), int(schema.get("maximum", 5)))
    if kind == "number":
        return round(rng.uniform(float(schema.get("minimum", 0.55)), float(schema.get("maximum", 0.95))), 2)
    if kind == "boolean":
        return rng.random() < 0.5
    return _reason(rng, subject, context, {}, {})


def _object(properties: dict[str, Any], rng: random.Random, subject: str, context: dict[str, str], key: str) -> dict:
    """The values first, then the reasons that explain them; keys keep the schema's order."""
    values: dict[str, Any] = {}
    for name, sub in properties.items():
        if name in REASON_KEYS:
            continue
        # The judge's reply formats key answers by letter under "scores" and metrics by name under "metrics".
        inner = {"scores": {"letter": name}, "metrics": {"metric": name}}.get(key, {})
        values[name] = _value(sub, rng, subject, {**context, **inner}, name)
    for name in properties:
        if name in REASON_KEYS:
            values[name] = _reason(rng, subject, context, values, properties)
    return {name: values[name] for name in properties}


def _reason(rng: random.Random, subject: str, context: dict, values: dict, properties: dict) -> str:
    on = f"On {context['metric'].lower()}, " if context.get("metric") else ""
    if "score" in values and "category" not in values:
        enum = properties.get("score", {}).get("enum") or [1, 5]
        return _score_reason(rng, subject, context.get("letter"), on, values["score"], min(enum), max(enum))
    if "winner" in values:
        letters = [letter for letter in properties["winner"].get("enum", []) if letter != "tie"]
        return _winner_reason(rng, subject, on, values["winner"], letters)
    if "category" in values:
        sure = values.get("score")
        hedge = f" I am fairly sure ({sure:.0%})." if isinstance(sure, float) else ""
        return f"The response on “{subject}” fits “{values['category']}” better than the other categories.{hedge}"
    return f"The answer to “{subject}” was read in full before deciding."


def _score_reason(rng: random.Random, subject: str, letter: str | None, on: str, score: int, low: int, high: int):
    who = f"answer {letter}" if letter else "the answer"
    share = (score - low) / (high - low) if high > low else 1.0
    if share >= 0.75:
        says = rng.choice(
            ("addresses “{s}” directly and completely", "handles “{s}” clearly, with nothing important missing")
        )
    elif share >= 0.4:
        says = rng.choice(
            ("covers the main point of “{s}” but leaves out a useful detail", "is on topic for “{s}” but vague")
        )
    else:
        says = rng.choice(("misses most of what “{s}” asks", "drifts away from “{s}” and gives little to use"))
    return _sentence(f"{on}{who} {says.format(s=subject)}, so it gets {score} of {high}.")


def _winner_reason(rng: random.Random, subject: str, on: str, winner: str, letters: list[str]) -> str:
    if winner == "tie" or len(letters) < 2:
        return _sentence(f"{on}both answers handle “{subject}” about equally well; neither is clearly better.")
    loser = next(letter for letter in letters if letter != winner)
    how = rng.choice(("more directly", "more completely", "with fewer loose ends"))
    return _sentence(f"{on}answer {winner} responds to “{subject}” {how} than answer {loser}.")


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]
