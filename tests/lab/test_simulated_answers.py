"""The simulated models answer plausibly and follow a prompt's simple instructions, offline and deterministically:
a language, a translation or a fact from their small tables, one sentence or so many words, a list of so many
items, JSON or YAML with the keys asked, a code block when asked; never the prompt itself; at a temperature above 0
each round is worded afresh unless a seed fixes it. A judge's call with a JSON schema gets an instance of it, with
reasons free of the prompt's reply template. Still labelled: prose starts with "**Simulated answer**"."""

import asyncio
import json
import re

import jsonschema
import pytest
import yaml

from judging.classification import Category, Classifier, JudgeKind, classification_prompt
from judging.prompts import Shown, head_to_head_prompt, pairwise_prompt, pointwise_prompt, relative_prompt
from judging.rubric import Rubric
from lab.providers.base import ChatRequest, ConnectionConfig, TextDelta, Usage
from lab.providers.simulated import SimulatedAdapter


def answer(prompt: str, model: str = "instant", system: str = "", **params) -> str:
    messages = ([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": prompt}]
    adapter = SimulatedAdapter(ConnectionConfig(name="simulated", kind="simulated"))
    return asyncio.run(adapter.complete(ChatRequest(model=model, messages=messages, params=params))).text


def body(text: str) -> str:
    head, _, rest = text.partition("\n\n")
    assert head == "**Simulated answer**"
    return rest


def test_the_same_request_gives_the_same_answer_and_another_prompt_another():
    assert answer("How can I reset my password?") == answer("How can I reset my password?")
    assert body(answer("How can I reset my password?")) != body(answer("How do I change my email address?"))
    # About the subject, addressed to the asker.
    assert "how to reset your password" in answer("Answer clearly: How can I reset my password?").lower()


def test_an_answer_never_repeats_the_prompts_own_words():
    # A blind comparison of prompt versions must not learn from an answer which version asked it.
    text = answer("Prompt v7 (formal, by Ada):\nSay something about tea.")
    assert not any(word in text for word in ("v7", "formal", "Ada", "Prompt"))


def test_it_writes_in_the_language_asked():
    french = body(answer("Explain how to brew tea, in French."))
    german = body(answer("Erkläre Tee, auf Deutsch.", system=""))
    assert any(word in french for word in ("Pour", "Commencez", "Vérifiez", "Si cela", "En pratique", "Notez"))
    assert any(word in german for word in ("Bei", "Beginnen", "Prüfen", "Wenn", "In der Praxis", "Notieren"))


def test_a_reply_to_a_customer_speaks_to_the_customer_about_their_message():
    system = "You answer customers of a small online shop."
    text = body(answer("Reply in two sentences: My parcel is a week late. Where is it?", system=system))
    assert "your parcel is a week late" in text and len(re.findall(r"[.!?](?:\s|$)", text)) == 2
    coupon = body(answer("Reply to this customer: My discount code says it has expired.", system=system))
    assert "```" not in coupon and "your discount code says it has expired" in coupon


def test_one_sentence_is_one_sentence():
    text = body(answer("Describe green tea in one sentence."))
    assert text.count(".") == 1 and text.endswith(".")


@pytest.mark.parametrize(
    ("prompt", "items", "marker"),
    [("Give me 4 tips for better sleep.", 4, "- "), ("List the steps to reset a router.", 3, "1. ")],
)
def test_a_list_has_the_items_asked(prompt, items, marker):
    lines = body(answer(prompt)).splitlines()
    assert len(lines) == items and lines[0].startswith(marker)


def test_json_when_asked_with_the_fields_the_prompt_lists():
    prompt = (
        'Classify the ticket. Reply as JSON with:\n- priority: "low" | "medium" | "high"\n'
        '- category: "bug" | "billing"\n\nTicket: charged twice'
    )
    value = json.loads(answer(prompt))
    assert value["priority"] in ("low", "medium", "high") and value["category"] in ("bug", "billing")
    assert set(value) == {"priority", "category"}


def test_yaml_when_asked():
    value = yaml.safe_load(answer("Return YAML with:\n- summary: one line\n\nText: the kettle leaks"))
    assert isinstance(value, dict) and isinstance(value["summary"], str)


def test_a_code_block_when_asked():
    text = answer("Write a javascript function that reverses a string.")
    assert "```javascript\nfunction reverses_a_string(value) {" in text and text.rstrip().endswith("```")


def test_the_length_follows_the_preset_in_whole_sentences_and_max_tokens_cuts_it_off():
    text = body(answer("Tell me about tea.", model="instant?tokens=25"))
    assert 25 <= len(text.split()) < 25 + 20 and text.endswith(".")
    assert len(body(answer("Tell me about tea.", model="instant?tokens=80")).split()) >= 80
    adapter = SimulatedAdapter(ConnectionConfig(name="simulated", kind="simulated"))
    cut = asyncio.run(
        adapter.complete(ChatRequest("instant", [{"role": "user", "content": "Tell me about tea."}], {"max_tokens": 5}))
    )
    assert cut.finish_reason == "length" and cut.usage.output_tokens == 5


def test_a_judge_s_call_with_a_schema_gets_an_instance_of_it():
    schema = {
        "type": "object",
        "properties": {
            "metrics": {
                "type": "object",
                "properties": {
                    "Overall": {
                        "type": "object",
                        "properties": {
                            "reason": {"type": "string"},
                            "score": {"type": "integer", "enum": [1, 2, 3, 4, 5]},
                        },
                        "required": ["reason", "score"],
                        "additionalProperties": False,
                    }
                },
                "required": ["Overall"],
                "additionalProperties": False,
            }
        },
        "required": ["metrics"],
        "additionalProperties": False,
    }
    adapter = SimulatedAdapter(ConnectionConfig(name="simulated", kind="simulated"))
    request = ChatRequest("thinker?ttft_ms=0&token_ms=0", [{"role": "user", "content": "Judge this answer."}])
    reply = asyncio.run(adapter.complete(request, json_schema=schema))
    jsonschema.validate(json.loads(reply.text), schema)


PROMPTS = (
    "Translate into French: Hello",
    "What is the capital of France?",
    "Return JSON with keys priority and category for this ticket: the app crashes on login",
    "Describe green tea in one sentence.",
    "Explain recursion in 12 words.",
    "Give me 3 bullet points on remote work.",
    "Write a python function that parses a date.",
    "How can I reset my password?",
    "the kettle leaks when I pour",
    "Summarize: the meeting moved to Friday because the room was booked",
)


@pytest.mark.parametrize("prompt", PROMPTS)
@pytest.mark.parametrize("model", ["instant", "writer", "thinker", "coder"])
def test_no_answer_contains_its_prompt(prompt, model):
    text = answer(prompt, model=f"{model}?ttft_ms=0&token_ms=0")
    assert prompt.lower().rstrip(".?") not in text.lower()


@pytest.mark.parametrize(
    ("prompt", "expected"),
    [
        ("Translate into French: Hello", "Bonjour."),
        ("Translate 'Good morning' to Spanish", "Buenos días."),
        ("Translate into German: Thank you", "Danke."),
        ("Translate into French: the cat and the dog", "Le chat et le chien."),  # word by word beyond the table
    ],
)
def test_a_translation_answers_in_the_language_asked(prompt, expected):
    assert body(answer(prompt)) == expected


@pytest.mark.parametrize(
    ("question", "fact"),
    [
        ("What is the capital of France?", "Paris"),
        ("What's the capital of Japan?", "Tokyo"),
        ("Who wrote Hamlet?", "William Shakespeare"),
        ("What is the largest planet?", "Jupiter"),
        ("What is 12 * 7?", "84"),
    ],
)
def test_a_short_factual_question_gets_the_fact_in_one_sentence(question, fact):
    text = body(answer(question))
    assert fact in text and text.endswith(".") and text.count(". ") == 0


def test_a_summary_is_one_sentence_shorter_than_the_text():
    text = "The new release adds dark mode, faster search and a redesigned inbox. It also fixes twelve bugs."
    summary = body(answer(f"Summarize the following text:\n{text}"))
    assert summary.split(", ", 1)[0] in ("In short", "In brief", "Put simply")
    assert "dark mode" in summary and "twelve bugs" not in summary and summary.endswith(".")


def test_json_with_the_keys_a_sentence_names_parses_and_has_plausible_types():
    value = json.loads(answer("Return JSON with keys priority, category, confidence and tags for: the app crashes"))
    assert list(value) == ["priority", "category", "confidence", "tags"]
    assert value["priority"] in ("high", "medium", "low") and value["category"] == "technical"
    assert 0 <= value["confidence"] <= 1 and isinstance(value["tags"], list)


@pytest.mark.parametrize(
    "prompt",
    [
        "Reply in JSON with the keys `name`, `email` and `age`: Ada, ada@example.com, 36",
        'Answer with JSON like {"name": "…", "email": "…", "age": 0} for: Ada, ada@example.com, 36',
    ],
)
def test_json_keys_named_in_backticks_or_shown_in_an_example(prompt):
    value = json.loads(answer(prompt))
    assert list(value) == ["name", "email", "age"] and isinstance(value["age"], int) and "@" in value["email"]


def test_so_many_words_or_sentences_as_asked():
    for words in (3, 12, 30):
        text = body(answer(f"Explain recursion in {words} words."))
        assert words / 3 <= len(text.split()) <= words and text.endswith(".")
    assert len(re.findall(r"[.!?](?:\s|$)", body(answer("Describe tea in three sentences.")))) == 3


@pytest.mark.parametrize(("language", "fence", "start"), [("SQL", "sql", "-- "), ("JavaScript", "javascript", "")])
def test_code_comes_in_the_language_asked_after_a_sentence(language, fence, start):
    text = body(answer(f"Write a {language} function that lists overdue invoices."))
    intro, _, code = text.partition("\n\n")
    assert intro.endswith(".") and code.startswith(f"```{fence}\n{start}") and code.endswith("```")


def test_rounds_at_a_temperature_differ_and_a_seed_reproduces_them():
    prompt, model = "Tell me about tea.", "writer?ttft_ms=0&token_ms=0"
    first, second = answer(prompt, model, temperature=0.7), answer(prompt, model, temperature=0.7)
    assert first != second
    seeded = answer(prompt, model, temperature=0.7, seed=11)
    assert seeded == answer(prompt, model, temperature=0.7, seed=11)
    assert seeded != answer(prompt, model, temperature=0.7, seed=12)
    assert answer(prompt, model, temperature=0) == answer(prompt, model, temperature=0)  # greedy: always the same


def test_the_tokens_streamed_add_up_to_the_usage_reported():
    adapter = SimulatedAdapter(ConnectionConfig(name="simulated", kind="simulated"))

    async def events(prompt):
        request = ChatRequest("instant", [{"role": "user", "content": prompt}], {})
        return [event async for event in adapter.stream(request)]

    for prompt in PROMPTS:
        streamed = asyncio.run(events(prompt))
        text = "".join(event.text for event in streamed if isinstance(event, TextDelta))
        usage = next(event for event in streamed if isinstance(event, Usage))
        assert usage.output_tokens == len(text.split()) == sum(isinstance(e, TextDelta) for e in streamed)


def judge_prompts():
    rubric = Rubric()
    a = Shown("A", "How can I reset my password?", "Open Settings, then Security, then Reset.")
    b = Shown("B", "How can I reset my password?", "Ask support.")
    classifier = Classifier(
        kind=JudgeKind.BINARY,
        criteria="Is the answer polite?",
        categories=(Category("polite"), Category("rude")),
        include_score=True,
    )
    return [
        relative_prompt(rubric, rubric.metrics[0], [a, b]),
        pointwise_prompt(rubric, a),
        pairwise_prompt(rubric, a, b),
        head_to_head_prompt(rubric, a, b),
        classification_prompt(classifier, request=a.prompt, response=a.text, columns={}),
    ]


def reasons(value):
    if isinstance(value, dict):
        for key, inner in value.items():
            if key in ("reason", "reasoning"):
                yield inner
            else:
                yield from reasons(inner)


@pytest.mark.parametrize("prompt", judge_prompts(), ids=["relative", "pointwise", "pairwise", "head", "classify"])
def test_a_simulated_judge_writes_strict_json_with_clean_specific_reasons(prompt):
    adapter = SimulatedAdapter(ConnectionConfig(name="simulated", kind="simulated"))
    request = ChatRequest("thinker?ttft_ms=0&token_ms=0", prompt.messages, {"temperature": 0})
    reply = asyncio.run(adapter.complete(request, json_schema=prompt.schema)).text
    value = json.loads(reply)
    jsonschema.validate(value, prompt.schema)
    written = list(reasons(value))
    assert written
    for reason in written:
        assert not re.search(r"[<>{}]", reason) and "…" not in reason
        assert "how to reset your password" in reason and reason.endswith(".")
