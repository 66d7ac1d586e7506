"""What a simulated model writes: a plausible answer that follows a prompt's simple instructions, offline.

Deterministic for a request (the random choices come from the caller's generator, seeded by the request unless
it asks for a temperature without a seed), different from prompt to prompt, and labelled: prose and lists start
with "**Simulated answer**" (never the prompt itself, which may name its version and give a blind comparison
away). Instructions it follows, first match first:

| the prompt says                                  | the answer                                              |
|--------------------------------------------------|---------------------------------------------------------|
| "JSON" (keys listed one a line or "with keys a   | only a JSON object with those keys, values typed by the |
| and b")                                          | key's name (priority, category, confidence, tags …)     |
| "YAML"                                           | only a YAML mapping, the same way                       |
| "Translate into French: Hello"                   | the translation (simulated_knowledge's phrase table)    |
| a short factual question the fact table knows    | the fact, in one sentence ("What is the capital of …")  |
| "Summarize: …", "sum up", "TL;DR"                | "In short, " and the text's first statement, shortened  |
| "code", "function", "snippet", a language name   | a sentence, then a fenced function skeleton in it       |
| "one sentence", "in one line", "one line"        | one sentence                                            |
| "in 12 words", "in three sentences"              | at most that many words, or that many sentences         |
| "list", "bullet points", "steps", "3 tips" …     | a list (numbered for steps), as many items as asked     |
| "in French" / German / Spanish / Italian (or the  | sentences in that language (any form above but code)   |
| language's own name: "en français", "auf Deutsch")|                                                         |
| anything else                                    | about the preset's length of prose, in whole sentences  |

Prose names the subject (the asker's "my" becomes "your"); when the request or system prompt speaks of customers
or support, it is written as a reply to a customer.

A JSON schema given to `complete` (a judge's call) gets simulated_judge's reply instead.
"""

from __future__ import annotations

import json
import random
import re
from typing import Any

import yaml

from .simulated_knowledge import fact, translation

SUPPORT = (
    "You will find the details under Orders in your account.",
    "If anything is still unclear, just reply to this message and we will sort it out.",
    "Our team usually answers within one working day.",
    "We have noted your request and will follow up by email.",
    "Nothing is lost in the meantime, so there is no need to do anything twice.",
)
SENTENCES = {
    "en": (
        "{Topic} comes down to a few clear steps.",
        "Start with what you already have, then change one thing at a time.",
        "The basics of {topic} matter more than any shortcut.",
        "Check the result before moving on, and adjust if something looks off.",
        "If that does not work, the settings or help pages usually cover the rest.",
        "A good rule of thumb is to keep it simple and try it once end to end.",
        "It helps to write down what you expect before you begin.",
        "In practice, this takes only a few minutes.",
        "Keep a note of what you changed, so you can undo it if needed.",
        "When in doubt, ask someone who has done it before.",
        "When it comes to {topic}, most of the work is doing things in order.",
        "The short version of {topic}: begin small and build from there.",
    ),
    # The voice of a reply to a customer (the request or system prompt speaks of customers or support), asking
    # how to do something ("how to reset your password") or telling what happened ("your parcel is late").
    "support": (
        "Thanks for getting in touch about {topic}.",
        "Good question about {topic}: it only takes a minute.",
        *SUPPORT,
    ),
    "support-news": (
        "Sorry to hear that {topic}.",
        "Thanks for letting us know that {topic}; we are on it.",
        *SUPPORT,
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
NUMBERS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10}
_AMOUNT = r"(\d{1,3}|one|two|three|four|five|six|seven|eight|nine|ten)"
WORD_COUNT = re.compile(rf"\b(?:in|within|under|using|of|at most|exactly)\s+{_AMOUNT}\s+words\b", re.IGNORECASE)
SENTENCE_COUNT = re.compile(rf"\b{_AMOUNT}\s+sentences\b", re.IGNORECASE)
# Asking for code: a language's name, a function or script, or code itself ("discount code" is not).
CODE = re.compile(
    r"\b(function|snippet|script|python|javascript|typescript|sql|bash|golang|rust)\b|```|"
    r"\b(write|show|give)( me)?( some| the| a)? code\b|\bcode (snippet|sample|example|that|to|for|in)\b|\bin go\b",
    re.IGNORECASE,
)
CODE_LANGUAGES = ("python", "javascript", "typescript", "sql", "bash", "go", "rust")
CODE_NAMES = dict(
    zip(CODE_LANGUAGES, ("Python", "JavaScript", "TypeScript", "SQL", "shell", "Go", "Rust"), strict=True)
)
# Keys named in a sentence: "JSON with keys priority and category", "fields: name, email, age".
KEYS = re.compile(
    r"\b(?:keys?|fields?|properties)\b\s*:?\s*((?:[`'\"]?[A-Za-z_]\w*[`'\"]?(?:\s*,\s*(?:and\s+)?|\s+(?:and|or)\s+)?)+)",
    re.IGNORECASE,
)
JOINERS = {"and", "or"}
SMALL_WORDS = {"about", "with", "from", "that", "this", "your", "have", "what", "when", "into", "they", "them"}
CATEGORIES = {
    "billing": r"charg|refund|invoice|pay|price|bill",
    "technical": r"crash|error|bug|broken|slow|fail|load",
    "account": r"password|login|log in|account|email|sign",
}
# What a key's name suggests its value is, first match wins: (a pattern of the name, a value maker).
VALUE_KINDS: tuple[tuple[str, Any], ...] = (
    (r"priority|urgency|severity", lambda rng, topic: rng.choice(("high", "medium", "low"))),
    (r"sentiment|tone", lambda rng, topic: rng.choice(("positive", "neutral", "negative"))),
    (r"categor|type|kind|label|class|topic", lambda rng, topic: _category(topic, rng)),
    (r"confidence|probability|ratio|percent", lambda rng, topic: round(rng.uniform(0.6, 0.95), 2)),
    (r"price|amount|cost|total", lambda rng, topic: round(rng.uniform(5, 120), 2)),
    (r"score|rating|count|number|quantity|age|id$|_id|minutes|hours|days", lambda rng, topic: rng.randint(1, 10)),
    (r"year", lambda rng, topic: rng.randint(2015, 2025)),
    (r"^(is|has|can|should)_|valid|urgent|resolved|enabled|done", lambda rng, topic: rng.random() < 0.5),
    (r"date|deadline", lambda rng, topic: f"2025-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}"),
    (r"email", lambda rng, topic: "someone@example.com"),
    (r"url|link", lambda rng, topic: "https://example.com/help"),
    (r"language|locale", lambda rng, topic: "English"),
    (r"tags|keywords|items|steps|list", lambda rng, topic: _keywords(topic)),
    (r"^(name|title)$", lambda rng, topic: topic[:1].upper() + topic[1:]),
)
# A field the prompt asks for, as prompts list them: `- priority: "low" | "medium" | "high"` or `- summary: …`.
FIELD = re.compile(r"^\s*[-*]\s*([A-Za-z_][A-Za-z0-9_]*)\s*:\s*(.*)$", re.MULTILINE)
OPTION = re.compile(r'"([^"]+)"')


def language_of(prompt: str) -> str:
    lowered = prompt.lower()
    return next((code for code, pattern in LANGUAGES.items() if re.search(pattern, lowered)), "en")


# Words that ask rather than say what about: "Give me 4 tips for", "Write a python function that", "in French".
ASKING = re.compile(
    r"^(please\s+)?(give me|tell me( about)?|explain|describe|summari[sz]e|write( me)?|list|name|"
    r"what (is|are)|why (is|are|do|does))\s+|"
    r"^(a|an|the|some|\d+|two|three|four|five)?\s*(\w+\s+)?(tips|ideas|reasons|ways|steps|sentences?|bullets|points|"
    r"(python|javascript|sql|bash)?\s*(function|script|snippet)s?)\s+(for|on|about|that|to)\s+|"
    r"\s+(in (one|a single) (sentence|line)|in \w+ (words|sentences)|in (french|german|spanish|italian)|"
    r"as (json|yaml|a list))\b",
    re.IGNORECASE,
)


SUMMARY = re.compile(r"\b(summari[sz]e|sum up|tl;?dr)\b", re.IGNORECASE)
HOW = re.compile(r"^(how (can|do|should|would|could)|can|could) (i|we)\s+", re.IGNORECASE)
CUSTOMER = re.compile(r"\b(customers?|support)\b", re.IGNORECASE)
# A subject that tells what happened rather than names a thing: "your parcel is a week late".
NEWS = re.compile(
    r"\b(is|are|was|were|has|have|had|does|did|says|got|came|arrived|need|needs|want|wants|would like|ordered|paid|"
    r"bought|isn't|can't|won't|doesn't|didn't)\b"
)
# The asker's words as the answer addresses them: "my parcel" is "your parcel" in a reply.
ADDRESSED = {"i": "you", "me": "you", "my": "your", "mine": "yours", "myself": "yourself", "i'm": "you're",
             "am": "are", "we": "you", "us": "you", "our": "your", "ours": "yours"}  # fmt: skip


def topic_of(prompt: str) -> str:
    """What the request is about, in a few words: the question after a colon, else its last line, without the
    words that only ask."""
    lines = [line.strip() for line in prompt.strip().splitlines() if line.strip()]
    text = lines[-1] if lines else ""
    if ":" in text and not text.endswith(":"):
        text = text.rsplit(":", 1)[1]
    text = re.split(r"(?<=[.!?])\s+", text.strip())[0]  # "My parcel is late. Where is it?": its first sentence
    text = re.sub(r"[?!.]+$", "", text)
    text = HOW.sub("how to ", text)  # "How can I reset it" is about "how to reset it"
    text = re.sub(r"[\w']+", lambda word: ADDRESSED.get(word.group().lower(), word.group()), text)
    for _ in range(3):  # "Give me" then "4 tips for", then "in French"
        text = ASKING.sub("", text).strip()
    words = text.split()
    # A prompt that is all subject ("the kettle leaks when I pour") must not come back whole in the answer.
    whole = len(words) == len(re.sub(r"[?!.]+$", "", prompt.strip()).split())
    topic = " ".join(words[: min(10, len(words) - 1) if whole and len(words) > 1 else 10])
    return re.sub(r"[<>{}]", "", topic).strip(" ,;:-") or "this"


def answer_text(prompt: str, *, rng: random.Random, words: int, style: str = "prose", system: str = "") -> str:
    """The whole answer to `prompt` (the user's message; `system` may add instructions): about `words` words of
    prose in whole sentences, unless the instructions ask for another form or the bundled tables know the answer."""
    asked = f"{system}\n{prompt}"
    wants = asked.lower()
    topic = topic_of(prompt)
    language = language_of(asked)
    voice = _voice(asked, topic, language)
    if re.search(r"\bjson\b", wants):
        return json.dumps(_fields(prompt, rng, topic, language), ensure_ascii=False, indent=2)
    if re.search(r"\bya?ml\b", wants):
        return yaml.safe_dump(_fields(prompt, rng, topic, language), allow_unicode=True, sort_keys=False).strip()
    head = "**Simulated answer**\n\n"
    known = translation(prompt) or fact(prompt, rng) or _summary(prompt, rng)
    if known:
        return head + known
    if CODE.search(asked):
        return head + _code(asked, topic, rng)
    if ONE_SENTENCE.search(asked):
        return head + _sentence(rng, topic, voice)
    if found := WORD_COUNT.search(asked):
        return head + _within_words(rng, topic, voice, _number(found.group(1)))
    if found := SENTENCE_COUNT.search(asked):
        return head + " ".join(_sentences(rng, topic, voice, _number(found.group(1))))
    if LIST.search(asked) or style == "steps":
        items = _sentences(rng, topic, voice, _count(asked))
        numbered = style == "steps" or "step" in wants
        return head + "\n".join(f"{i}. {item}" if numbered else f"- {item}" for i, item in enumerate(items, 1))
    return head + _prose(rng, topic, voice, words)


def _summary(prompt: str, rng: random.Random) -> str | None:
    """A one-sentence summary when asked for one: the text's first statement, shortened; None when not asked."""
    found = SUMMARY.search(prompt)
    if not found:
        return None
    text = prompt[found.end() :].lstrip(" :\n")
    text = re.sub(r"^(this|the following|the text|it)( text| message| ticket)?\s*(below|in \w+ \w+)?\s*:?\s*", "", text)
    first = re.split(r"(?<=[.!?])\s+", text.strip())[0].rstrip(".!?")
    words = first.split()[:14]
    if not words:
        return None
    lead = rng.choice(("In short, ", "In brief, ", "Put simply, "))
    return lead + " ".join(words)[:1].lower() + " ".join(words)[1:].rstrip(",;:") + "."


def _voice(asked: str, topic: str, language: str) -> str:
    """Which bank of sentences answers: the language's, or in English a reply to a customer."""
    if language != "en" or not CUSTOMER.search(asked):
        return language
    return "support-news" if NEWS.search(topic) else "support"


def _sentence(rng: random.Random, topic: str, language: str) -> str:
    """One sentence that names the subject."""
    return _filled(rng.choice([t for t in SENTENCES[language] if "opic}" in t]), topic)


def _filled(template: str, topic: str) -> str:
    return template.format(topic=topic[:1].lower() + topic[1:], Topic=topic[:1].upper() + topic[1:])


def _sentences(rng: random.Random, topic: str, language: str, count: int) -> list[str]:
    """`count` different sentences (the bank's order shuffled), repeating only when the bank runs out."""
    bank = list(SENTENCES[language])
    rng.shuffle(bank)
    # The first sentence names the subject, so even a short answer is about what was asked.
    first = next(i for i, template in enumerate(bank) if "opic}" in template)
    bank.insert(0, bank.pop(first))
    return [_filled(bank[i % len(bank)], topic) for i in range(count)]


def _prose(rng: random.Random, topic: str, language: str, words: int) -> str:
    """Whole sentences, never the same one twice in a row, until there are at least `words` words."""
    sentences, count = [], 0
    for sentence in _sentences(rng, topic, language, max(words, 1)):
        sentences.append(sentence)
        count += len(sentence.split())
        if count >= words:
            break
    return " ".join(sentences)


def _within_words(rng: random.Random, topic: str, language: str, words: int) -> str:
    """At most `words` words, as asked ("in 12 words"): the whole sentences that fit, or the subject alone when
    none does."""
    kept, count = [], 0
    for sentence in _sentences(rng, topic, language, len(SENTENCES[language])):
        size = len(sentence.split())
        if count + size <= words:
            kept.append(sentence)
            count += size
    if kept:
        return " ".join(kept)
    cut = " ".join(topic.split()[:words])  # fewer words than any sentence: the subject alone, as a heading
    return cut[:1].upper() + cut[1:] + "."


def _number(raw: str) -> int:
    return max(1, min(int(raw) if raw.isdigit() else NUMBERS[raw.lower()], 200))


def _count(prompt: str) -> int:
    found = COUNT.search(prompt)
    return min(_number(found.group(1)), 10) if found else 3


def _keywords(topic: str) -> list[str]:
    words = [word for word in re.findall(r"[a-z]{4,}", topic.lower()) if word not in SMALL_WORDS]
    return list(dict.fromkeys(words))[:3] or [topic]


def _category(topic: str, rng: random.Random) -> str:
    """A support-style category matching the subject's words, else any."""
    lowered = topic.lower()
    for category, pattern in CATEGORIES.items():
        if re.search(pattern, lowered):
            return category
    return rng.choice(tuple(CATEGORIES))


def asked_keys(prompt: str) -> list[tuple[str, str]]:
    """The keys a prompt asks a JSON or YAML reply to have, each with what it says of the key's values: listed
    one per line (`- priority: "low" | "high"`), in an example object, or named in a sentence ("with keys priority
    and category")."""
    listed = FIELD.findall(prompt)
    if listed:
        return listed
    example = re.findall(r'"([A-Za-z_]\w*)"\s*:', prompt)  # an example object: {"sentiment": …, "score": …}
    if example:
        return [(name, "") for name in dict.fromkeys(example)]
    found = KEYS.search(prompt)
    if not found:
        return []
    return [(name, "") for name in dict.fromkeys(re.findall(r"[A-Za-z_]\w*", found.group(1))) if name not in JOINERS]


def _fields(prompt: str, rng: random.Random, topic: str, language: str) -> dict[str, Any]:
    keys = asked_keys(prompt)
    if not keys:
        return {"answer": _sentence(rng, topic, language), "topic": topic}
    return {name: _typed(name, OPTION.findall(rest), rng, topic, language) for name, rest in keys}


def _typed(name: str, options: list[str], rng: random.Random, topic: str, language: str) -> Any:
    """A plausible value for a key: one of the options the prompt gives, else what the key's name suggests."""
    if options:
        return rng.choice(options)
    lowered = name.lower()
    for pattern, make in VALUE_KINDS:
        if re.search(pattern, lowered):
            return make(rng, topic)
    return _sentence(rng, topic, language)


def _code(prompt: str, topic: str, rng: random.Random) -> str:
    """A sentence saying what follows, then a small function skeleton in the language asked (Python if none)."""
    lowered = prompt.lower()
    named = {**{name: rf"\b{name}\b" for name in CODE_LANGUAGES}, "go": r"\bgolang\b|\bin go\b"}
    language = next((name for name in CODE_LANGUAGES if re.search(named[name], lowered)), "python")
    name = "_".join(re.findall(r"[a-z]+", topic.lower())[:3]) or "answer"
    bodies = {
        "python": f'def {name}(value):\n    """{topic[:1].upper() + topic[1:]}."""\n    return value\n',
        "javascript": f"function {name}(value) {{\n  // {topic}\n  return value;\n}}\n",
        "typescript": f"function {name}(value: string): string {{\n  // {topic}\n  return value;\n}}\n",
        "sql": f"-- {topic}\nSELECT *\nFROM items\nLIMIT 10;\n",
        "bash": f'#!/bin/sh\n# {topic}\necho "$1"\n',
        "go": f"// {topic}\nfunc {name}(value string) string {{\n\treturn value\n}}\n",
        "rust": f"// {topic}\nfn {name}(value: &str) -> &str {{\n    value\n}}\n",
    }
    shown = CODE_NAMES[language]
    intro = rng.choice(
        (
            f"Here is a small {shown} starting point; rename things to fit your code.",
            f"A minimal {shown} version looks like this.",
            f"This {shown} sketch covers the basic case; add error handling as needed.",
        )
    )
    return f"{intro}\n\n```{language}\n{bodies[language]}```"
