"""What a simulated model writes: a plausible answer that follows a prompt's simple instructions, offline.

Deterministic for a request (the random choices come from the caller's seeded generator), different from prompt
to prompt, and labelled: prose and lists start with "**Simulated answer**" (never the prompt's own words, which
may name its version and give a blind comparison away). Instructions it follows:

| the prompt says                                  | the answer                                              |
|--------------------------------------------------|---------------------------------------------------------|
| "in French" / German / Spanish / Italian (or the  | sentences in that language                              |
| language's own name: "en français", "auf Deutsch")|                                                         |
| "one sentence", "in one line", "one line"        | one sentence                                            |
| "list", "bullet points", "steps", "3 tips" …     | a list (numbered for steps), as many items as asked     |
| "JSON"                                           | only a JSON object, with the keys the prompt lists      |
| "YAML"                                           | only a YAML mapping, the same way                       |
| "code", "function", "snippet", a language name   | a fenced code block in that language                    |

A JSON schema given to `complete` (a judge's call) gets an instance of that schema instead: enums chosen, numbers
in range, texts written as sentences.
"""

from __future__ import annotations

import json
import random
import re
from typing import Any

import yaml

SENTENCES = {
    "en": (
        "{Topic} comes down to a few clear steps.",
        "Start with what you already have, then change one thing at a time.",
        "Most people find it easiest to begin with the basics of {topic}.",
        "Check the result before moving on, and adjust if something looks off.",
        "If that does not work, the settings page usually has what you need.",
        "A good rule of thumb is to keep it simple and try it once end to end.",
        "It helps to write down what you expect before you begin.",
        "In practice, {topic} takes only a few minutes.",
        "Keep a note of what you changed, so you can undo it if needed.",
        "When in doubt, ask someone who has done {topic} before.",
    ),
    "fr": (
        "Pour {topic}, il suffit de quelques étapes simples.",
        "Commencez par ce que vous avez déjà, puis changez une chose à la fois.",
        "Vérifiez le résultat avant de continuer.",
        "Si cela ne marche pas, la page des réglages aide souvent.",
        "En pratique, cela ne prend que quelques minutes.",
        "Notez ce que vous changez, pour pouvoir revenir en arrière.",
    ),
    "de": (
        "Bei {topic} helfen ein paar klare Schritte.",
        "Beginnen Sie mit dem, was Sie schon haben, und ändern Sie eins nach dem anderen.",
        "Prüfen Sie das Ergebnis, bevor Sie weitermachen.",
        "Wenn das nicht klappt, helfen meist die Einstellungen.",
        "In der Praxis dauert das nur wenige Minuten.",
        "Notieren Sie, was Sie ändern, damit Sie es rückgängig machen können.",
    ),
    "es": (
        "Para {topic}, bastan unos pasos claros.",
        "Empiece por lo que ya tiene y cambie una cosa cada vez.",
        "Compruebe el resultado antes de seguir.",
        "Si no funciona, la página de ajustes suele ayudar.",
        "En la práctica, solo lleva unos minutos.",
        "Anote lo que cambia, para poder deshacerlo.",
    ),
    "it": (
        "Per {topic} bastano pochi passi chiari.",
        "Inizi da ciò che ha già e cambi una cosa alla volta.",
        "Controlli il risultato prima di continuare.",
        "Se non funziona, le impostazioni di solito aiutano.",
        "In pratica, ci vogliono pochi minuti.",
        "Annoti cosa cambia, per poterlo annullare.",
    ),
}
LANGUAGES = {
    "fr": r"\bin french\b|\ben français\b|\bfrançais\b",
    "de": r"\bin german\b|\bauf deutsch\b|\bdeutsch\b",
    "es": r"\bin spanish\b|\ben español\b|\bespañol\b",
    "it": r"\bin italian\b|\bin italiano\b|\bitaliano\b",
}
ONE_SENTENCE = re.compile(r"\b(one|a single|1) (sentence|line)\b|\bin one line\b", re.IGNORECASE)
LIST = re.compile(r"\b(list|bullet|bullets|bullet points|steps|tips|ideas|reasons|ways|items)\b", re.IGNORECASE)
COUNT = re.compile(
    r"\b(\d{1,2}|two|three|four|five|six|seven)\s+(?:\w+\s+)?(tips|ideas|reasons|ways|steps|items|points|bullets)\b",
    re.IGNORECASE,
)
NUMBERS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7}
CODE = re.compile(
    r"\b(code|function|snippet|script|python|javascript|typescript|sql|bash|go|rust)\b|```", re.IGNORECASE
)
CODE_LANGUAGES = ("python", "javascript", "typescript", "sql", "bash", "go", "rust")
# A field the prompt asks for, as prompts list them: `- priority: "low" | "medium" | "high"` or `- summary: …`.
FIELD = re.compile(r"^\s*[-*]\s*([A-Za-z_][A-Za-z0-9_]*)\s*:\s*(.*)$", re.MULTILINE)
OPTION = re.compile(r'"([^"]+)"')


def language_of(prompt: str) -> str:
    lowered = prompt.lower()
    return next((code for code, pattern in LANGUAGES.items() if re.search(pattern, lowered)), "en")


# Words that ask rather than say what about: "Give me 4 tips for", "Write a python function that", "in French".
ASKING = re.compile(
    r"^(please\s+)?(give me|tell me( about)?|explain|describe|summari[sz]e|write( me)?|list|name|"
    r"how (can|do|should) (i|we|you)|what (is|are)|why (is|are|do|does))\s+|"
    r"^(a|an|the|some|\d+|two|three|four|five)?\s*(\w+\s+)?(tips|ideas|reasons|ways|steps|sentences?|"
    r"(python|javascript|sql|bash)?\s*(function|script|snippet)s?)\s+(for|on|about|that|to)\s+|"
    r"\s+(in (one|a single) (sentence|line)|in (french|german|spanish|italian)|as (json|yaml|a list))\b",
    re.IGNORECASE,
)


def topic_of(prompt: str) -> str:
    """What the request is about, in a few words: the question after a colon, else its last line, without the
    words that only ask."""
    lines = [line.strip() for line in prompt.strip().splitlines() if line.strip()]
    text = lines[-1] if lines else ""
    if ":" in text and not text.endswith(":"):
        text = text.rsplit(":", 1)[1]
    text = re.sub(r"[?!.]+$", "", text.strip())
    for _ in range(3):  # "Give me" then "4 tips for", then "in French"
        text = ASKING.sub("", text).strip()
    return " ".join(text.split()[:10]) or "this"


def answer_text(prompt: str, *, rng: random.Random, words: int, style: str = "prose", system: str = "") -> str:
    """The whole answer to `prompt` (the user's message; `system` may add instructions): about `words` words of
    prose, unless the instructions ask for another form."""
    asked = f"{system}\n{prompt}"
    wants = asked.lower()
    topic = topic_of(prompt)
    language = language_of(asked)
    if re.search(r"\bjson\b", wants):
        return json.dumps(_fields(prompt, rng, topic, language), ensure_ascii=False, indent=2)
    if re.search(r"\bya?ml\b", wants):
        return yaml.safe_dump(_fields(prompt, rng, topic, language), allow_unicode=True, sort_keys=False).strip()
    head = "**Simulated answer**\n\n"
    if CODE.search(asked) or style == "code":
        return head + _sentence(rng, topic, language) + "\n\n" + _code(asked, topic)
    if ONE_SENTENCE.search(asked):
        return head + _sentence(rng, topic, language)
    if LIST.search(asked) or style == "steps":
        count = _count(asked)
        items = [_sentence(rng, topic, language) for _ in range(count)]
        numbered = style == "steps" or "step" in wants
        return head + "\n".join(f"{i}. {item}" if numbered else f"- {item}" for i, item in enumerate(items, 1))
    return head + _prose(rng, topic, language, words)


def _sentence(rng: random.Random, topic: str, language: str) -> str:
    template = rng.choice(SENTENCES[language])
    lower = topic[:1].lower() + topic[1:]
    return template.format(topic=lower, Topic=topic[:1].upper() + topic[1:])


def _prose(rng: random.Random, topic: str, language: str, words: int) -> str:
    """Sentences, never the same one twice in a row, cut to exactly `words` words."""
    bank = list(SENTENCES[language])
    rng.shuffle(bank)
    sentences, count = [], 0
    while count < words:
        sentence = bank[len(sentences) % len(bank)].format(
            topic=topic[:1].lower() + topic[1:], Topic=topic[:1].upper() + topic[1:]
        )
        sentences.append(sentence)
        count += len(sentence.split())
    text = " ".join(sentences).split()[: max(words, 1)]
    return " ".join(text).rstrip(",;:") + ("" if text[-1].endswith((".", "!", "?")) else ".")


def _count(prompt: str) -> int:
    found = COUNT.search(prompt)
    if not found:
        return 3
    raw = found.group(1).lower()
    return max(1, min(int(raw) if raw.isdigit() else NUMBERS[raw], 10))


def _fields(prompt: str, rng: random.Random, topic: str, language: str) -> dict[str, Any]:
    fields = FIELD.findall(prompt)
    if not fields:
        return {"answer": _sentence(rng, topic, language), "topic": topic}
    value: dict[str, Any] = {}
    for name, rest in fields:
        options = OPTION.findall(rest)
        value[name] = rng.choice(options) if options else _sentence(rng, topic, language)
    return value


def _code(prompt: str, topic: str) -> str:
    lowered = prompt.lower()
    language = next((name for name in CODE_LANGUAGES if re.search(rf"\b{name}\b", lowered)), "python")
    name = "_".join(re.findall(r"[a-z]+", topic.lower())[:3]) or "answer"
    bodies = {
        "python": f'def {name}(value):\n    """{topic}"""\n    return value\n',
        "javascript": f"function {name}(value) {{\n  // {topic}\n  return value;\n}}\n",
        "typescript": f"function {name}(value: string): string {{\n  // {topic}\n  return value;\n}}\n",
        "sql": f"-- {topic}\nSELECT *\nFROM items\nLIMIT 10;\n",
        "bash": f'#!/bin/sh\n# {topic}\necho "$1"\n',
        "go": f"// {topic}\nfunc {name}(value string) string {{\n\treturn value\n}}\n",
        "rust": f"// {topic}\nfn {name}(value: &str) -> &str {{\n    value\n}}\n",
    }
    return f"```{language}\n{bodies[language]}```"


def schema_instance(schema: dict[str, Any], rng: random.Random, topic: str) -> Any:
    """A value of the JSON schema: what a simulated judge replies when the call gives a schema."""
    if "enum" in schema:
        return rng.choice(schema["enum"])
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        return {name: schema_instance(sub, rng, topic) for name, sub in (schema.get("properties") or {}).items()}
    if kind == "array":
        return [schema_instance(schema.get("items") or {}, rng, topic)]
    if kind == "integer":
        return rng.randint(int(schema.get("minimum", 1)), int(schema.get("maximum", 5)))
    if kind == "number":
        return round(rng.uniform(float(schema.get("minimum", 0)), float(schema.get("maximum", 1))), 2)
    if kind == "boolean":
        return rng.random() < 0.5
    return _sentence(rng, topic, "en")
