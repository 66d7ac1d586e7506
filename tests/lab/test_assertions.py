"""Each assertion type against cases from promptfoo's own tests and docs (the source is cited per case), the
`not-` forms, thresholds, the weighted test score, and what parse_assertions refuses.

PF = https://github.com/promptfoo/promptfoo ; "docs" = site/docs/configuration/expected-outputs/deterministic.md.
"""

from __future__ import annotations

import math
from decimal import Decimal

import pytest
from django.core.exceptions import ValidationError

from lab.assertions import AnswerFacts, grade, parse_assertions
from lab.assertions.checks import comma_separated, extract_json_objects
from lab.assertions.overlap import bleu, rouge_n, treebank_tokenize


def check(assertion: dict, output: str, **facts):
    """One assertion on one answer: (pass, score, reason)."""
    specs = parse_assertions([assertion], where="assertions")
    facts.setdefault("latency_ms", None)
    facts.setdefault("cost", None)
    facts.setdefault("vars", {})
    result = grade(specs, AnswerFacts(output=output, **facts)).components[0]
    return result.passed, result.score, result.reason


# --- equals: PF src/assertions/equals.ts, test/assertions/equals.test.ts
def test_equals_is_exact_and_case_sensitive():
    assert check({"type": "equals", "value": "Hello world"}, "Hello world")[:2] == (True, 1.0)
    passed, score, reason = check({"type": "equals", "value": "Hello world"}, "hello world")
    assert (passed, score) == (False, 0.0)
    assert reason == 'Expected output "hello world" to equal "Hello world"'
    # No trimming: a trailing newline is a different answer (equals.ts compares the strings as they are).
    assert not check({"type": "equals", "value": "Hello"}, "Hello\n")[0]


def test_not_equals_inverts():
    assert check({"type": "not-equals", "value": "Hello"}, "Goodbye")[0]
    passed, _, reason = check({"type": "not-equals", "value": "Hello"}, "Hello")
    assert not passed and reason == 'Expected output "Hello" to not equal "Hello"'


def test_equals_with_an_object_compares_parsed_json():
    # equals.test.ts "should pass when the output matches the expected object" / not JSON → not-equals passes.
    assert check({"type": "equals", "value": {"a": 1, "b": [2]}}, '{"b": [2], "a": 1}')[0]
    assert not check({"type": "equals", "value": {"a": 1}}, "not json")[0]
    assert check({"type": "not-equals", "value": {"a": 1}}, "not json")[0]


def test_equals_fills_placeholders_from_the_row():
    # docs: "`value` … may reference test vars", e.g. value: '{{expected}}'.
    assert check({"type": "equals", "value": "{{expected}}"}, "Paris", vars={"expected": "Paris"})[0]


# --- contains / icontains: PF src/assertions/contains.ts, test/assertions/contains.test.ts
def test_contains_and_its_inverse():
    assert check({"type": "contains", "value": "Expected"}, "Expected output")[0]
    passed, _, reason = check({"type": "contains", "value": "expected"}, "Expected output")
    assert not passed and reason == 'Expected output to contain "expected"'
    passed, _, reason = check({"type": "not-contains", "value": "Expected"}, "Expected output")
    assert not passed and reason == 'Expected output to not contain "Expected"'
    # contains.test.ts "should handle number values": String(value) is searched for.
    assert check({"type": "contains", "value": 42}, "The answer is 42")[0]


def test_icontains_folds_case():
    assert check({"type": "icontains", "value": "EXPECTED"}, "expected output")[0]
    assert not check({"type": "not-icontains", "value": "EXPECTED"}, "expected output")[0]
    assert check({"type": "not-icontains", "value": "missing"}, "expected output")[0]


def test_contains_any_all_with_lists_and_comma_strings():
    # contains.test.ts: "contains-any … comma-separated string", quoted fields keep their commas
    # (src/util/parseCommaSeparatedValues.ts).
    assert comma_separated('apple, "banana, split", cherry') == ["apple", "banana, split", "cherry"]
    assert comma_separated("a,, b ,") == ["a", "b"]
    assert check({"type": "contains-any", "value": ["Sun", "Moon"]}, "the Moon rises")[0]
    assert check({"type": "contains-any", "value": "Sun, Moon"}, "the Moon rises")[0]
    passed, _, reason = check({"type": "contains-any", "value": ["sun", "star"]}, "the Moon rises")
    assert not passed and reason == 'Expected output to contain one of "sun, star"'
    assert check({"type": "not-contains-any", "value": ["sun", "star"]}, "the Moon rises")[0]
    passed, _, reason = check({"type": "contains-all", "value": ["Moon", "Sun"]}, "the Moon rises")
    assert not passed and reason == "Expected output to contain all of [Moon, Sun]. Missing: [Sun]"
    assert check({"type": "contains-all", "value": "Moon, rises"}, "the Moon rises")[0]
    assert check({"type": "not-contains-all", "value": ["Moon", "Sun"]}, "the Moon rises")[0]


def test_icontains_any_all_fold_case():
    assert check({"type": "icontains-any", "value": ["MOON"]}, "the moon")[0]
    assert check({"type": "icontains-all", "value": ["THE", "MOON"]}, "the moon")[0]
    assert not check({"type": "icontains-all", "value": ["THE", "SUN"]}, "the moon")[0]
    assert check({"type": "not-icontains-any", "value": ["SUN"]}, "the moon")[0]
    assert not check({"type": "not-icontains-all", "value": ["THE", "MOON"]}, "the moon")[0]


# --- starts-with: PF src/assertions/startsWith.ts
def test_starts_with():
    assert check({"type": "starts-with", "value": "Yes"}, "Yes, it is.")[0]
    passed, _, reason = check({"type": "starts-with", "value": "yes"}, "Yes, it is.")
    assert not passed and reason == 'Expected output to start with "yes"'
    assert check({"type": "not-starts-with", "value": "No"}, "Yes, it is.")[0]


# --- regex: PF src/assertions/regex.ts; docs example `\d{4}-\d{2}-\d{2}`
def test_regex_searches_anywhere():
    assert check({"type": "regex", "value": r"\d{4}-\d{2}-\d{2}"}, "Due 2024-01-31, thanks")[0]
    passed, _, reason = check({"type": "regex", "value": r"^\d+$"}, "12a")
    assert not passed and reason == 'Expected output to match regex "^\\d+$"'
    assert check({"type": "not-regex", "value": r"\d"}, "no digits")[0]


def test_a_regex_made_bad_by_a_variable_fails_with_promptfoos_reason():
    passed, _, reason = check({"type": "regex", "value": "{{pattern}}"}, "x", vars={"pattern": "("})
    assert not passed and reason.startswith("Invalid regex pattern:")


# --- is-json / contains-json: PF src/assertions/json.ts, test/assertions/json.test.ts, docs "is-json"
SCHEMA = {"type": "object", "required": ["latitude"], "properties": {"latitude": {"type": "number"}}}


def test_is_json_with_and_without_a_schema():
    assert check({"type": "is-json"}, '{"latitude": 1}')[0]
    passed, _, reason = check({"type": "is-json"}, "{latitude: 1}")
    assert not passed and reason == "Expected output to be valid JSON"
    assert check({"type": "not-is-json"}, "plain text")[0]
    assert check({"type": "not-is-json"}, "[1]")[2] == "Expected output to not be valid JSON"
    assert check({"type": "is-json", "value": SCHEMA}, '{"latitude": 1.5}')[0]
    passed, _, reason = check({"type": "is-json", "value": SCHEMA}, '{"latitude": "north"}')
    assert not passed and reason.startswith("JSON does not conform to the provided schema. Errors:")
    # docs: the schema may be written as YAML text.
    yaml_schema = "type: object\nrequired: [latitude]\n"
    assert not check({"type": "is-json", "value": yaml_schema}, "{}")[0]
    passed, _, reason = check({"type": "not-is-json", "value": SCHEMA}, '{"latitude": 2}')
    assert not passed and reason == "Output is JSON that conforms to the provided schema"


def test_contains_json_finds_objects_inside_text():
    assert extract_json_objects('Here: {"a": 1} and {"b": {"c": 2}} end {bad') == [{"a": 1}, {"b": {"c": 2}}]
    assert check({"type": "contains-json"}, 'Sure! {"latitude": 3} Hope it helps')[0]
    passed, _, reason = check({"type": "contains-json"}, "no json here")
    assert not passed and reason == "Expected output to contain valid JSON"
    assert check({"type": "not-contains-json"}, "no json here")[0]
    assert check({"type": "contains-json", "value": SCHEMA}, 'x {"a": 1} y {"latitude": 4}')[0]
    assert not check({"type": "contains-json", "value": SCHEMA}, 'x {"a": 1}')[0]


# --- is-valid-openai-tools-call: PF src/assertions/openai.ts (structure only, against the offered tools)
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
        },
    }
]


def call(name: str, arguments: str) -> dict:
    return {"type": "function", "function": {"name": name, "arguments": arguments}}


def test_tools_call_checks_names_and_arguments():
    good = [call("get_weather", '{"city": "Paris"}')]
    assert check({"type": "is-valid-openai-tools-call"}, "", tool_calls=good, tools=TOOLS)[0]
    passed, _, reason = check(
        {"type": "is-valid-openai-tools-call"}, "", tool_calls=[call("get_time", "{}")], tools=TOOLS
    )
    assert not passed and reason == 'Called "get_time", but there is no function with that name'
    passed, _, reason = check(
        {"type": "is-valid-openai-tools-call"}, "", tool_calls=[call("get_weather", "{}")], tools=TOOLS
    )
    assert not passed and reason.startswith('Call to "get_weather" does not match schema')
    passed, _, reason = check({"type": "is-valid-openai-tools-call"}, "plain answer", tools=TOOLS)
    assert not passed and reason.startswith("OpenAI did not return a valid-looking tools response")
    passed, _, reason = check({"type": "is-valid-openai-tools-call"}, "", tool_calls=good)
    assert not passed and "Tools are expected" in reason
    # With text besides its calls, promptfoo's provider answers the whole message, which is no tools response.
    passed, _, reason = check({"type": "is-valid-openai-tools-call"}, "Let me look.", tool_calls=good, tools=TOOLS)
    assert not passed and reason.startswith('OpenAI did not return a valid-looking tools response: {"role"')


# --- levenshtein: PF src/assertions/levenshtein.ts (threshold ?? 5), docs "levenshtein"
def test_levenshtein_threshold_and_default():
    assert check({"type": "levenshtein", "value": "hello world", "threshold": 5}, "hello wrld")[0]
    # The textbook pair: kitten → sitting is 3 edits.
    assert check({"type": "levenshtein", "value": "kitten", "threshold": 3}, "sitting")[0]
    passed, _, reason = check({"type": "levenshtein", "value": "kitten", "threshold": 2}, "sitting")
    assert not passed and reason == "Levenshtein distance 3 is greater than threshold 2"
    assert not check({"type": "levenshtein", "value": "kitten"}, "a sitting duck")[0]
    assert check({"type": "levenshtein", "value": "abc", "threshold": 0}, "abc")[0]
    assert not check({"type": "levenshtein", "value": "abc", "threshold": 0}, "abd")[0]
    # promptfoo's handler never reads `inverse`: not-levenshtein grades exactly as levenshtein does.
    assert check({"type": "not-levenshtein", "value": "abc"}, "abd")[0]


# --- rouge-n: PF src/assertions/rouge.ts (`rougeNScore`) and test/assertions/rouge.test.ts: every case below is one
# of that file's, with its numbers.
def test_rouge_n_matches_promptfoos_test_values():
    value = "This is the expected output."
    passed, score, reason = check({"type": "rouge-n", "value": "the cat sat on the mat"}, "the cat sat on the mat")
    assert (passed, score, reason) == (True, 1.0, "ROUGE-N score 1.00 is greater than or equal to threshold 0.75")
    passed, score, reason = check({"type": "rouge-n", "value": value}, "some different output")
    assert not passed and score == pytest.approx(0.2222, abs=1e-4)
    assert reason == "ROUGE-N score 0.22 is less than threshold 0.75"
    passed, _, reason = check({"type": "rouge-n", "value": value, "threshold": 0.2}, "some different output")
    assert passed and reason == "ROUGE-N score 0.22 is greater than or equal to threshold 0.2"
    # not-: the pass inverts and the score is 1 − ROUGE.
    assert check({"type": "not-rouge-n", "value": "the cat sat on the mat"}, "the cat sat on the mat")[:2] == (False, 0)
    passed, score, _ = check({"type": "not-rouge-n", "value": value}, "some different output")
    assert passed and score == pytest.approx(0.7778, abs=1e-4)
    # Case-insensitive, and repeated tokens are counted (clipped), so an identical "Hello hello" is 1.0.
    assert check({"type": "rouge-n", "value": "the cat sat"}, "The CAT Sat")[1] == 1.0
    assert check({"type": "rouge-n", "value": "Hello hello"}, "Hello hello")[1] == 1.0
    assert not check({"type": "not-rouge-n", "value": "Hello hello"}, "Hello hello")[0]
    assert check({"type": "rouge-n", "value": "delta epsilon zeta"}, "alpha beta gamma")[:2] == (False, 0.0)
    # A period inside the text stays on its word ("world."), so this is 2/3 and not 0.86.
    assert check({"type": "rouge-n", "value": "hello world next"}, "hello world. next")[1] == pytest.approx(2 / 3)
    # Blank text scores 0 instead of failing; with threshold 0 that passes (and not- fails).
    for blank in ["", " ", "\n", "\u0085", " \u0085\n"]:
        assert check({"type": "rouge-n", "value": "the cat sat"}, blank)[:2] == (False, 0.0)
    passed, score, reason = check({"type": "rouge-n", "value": "reference", "threshold": 0}, "")
    assert (passed, score, reason) == (True, 0.0, "ROUGE-N score 0.00 is greater than or equal to threshold 0")
    assert check({"type": "not-rouge-n", "value": "reference", "threshold": 0}, "")[:2] == (False, 1.0)


def test_treebank_tokenizer_splits_as_js_rouge():
    # js-rouge test/tests.ts "treeBankTokenize" style cases.
    assert treebank_tokenize("They'll save and invest more.") == ["They", "'ll", "save", "and", "invest", "more", "."]
    assert treebank_tokenize("hi, my name can't hello,") == ["hi", ",", "my", "name", "ca", "n't", "hello", ","]
    # Clipped: one "the" of three matches; precision 1/3, recall 1/2, F1 = 0.4.
    assert rouge_n("the the the", "the cat") == pytest.approx(0.4)


# --- bleu: PF src/assertions/bleu.ts, test/assertions/bleu.test.ts
def test_bleu_matches_promptfoos_tests():
    # bleu.ts: a candidate shorter than 4 words skips the orders it cannot have (a perfect short match is 1.0), and
    # the brevity penalty is exp(1 − r/c): 3 words against 6 is exp(1 − 2).
    assert bleu("the cat sat", ["the cat sat"]) == pytest.approx(1.0)
    assert bleu("the cat sat", ["the cat sat on the mat"]) == pytest.approx(math.exp(-1))
    ref = "The cat sat on the mat."
    assert bleu(ref, [ref]) > 0.999
    assert 0 < bleu("Dogs run in the park.", [ref]) < 0.001
    assert 0.5 < bleu("The dog sat on the mat.", [ref]) < 1.0
    assert bleu("cat", ["cat"]) > 0
    assert 0 < bleu("The cat sat.", [ref]) < 1
    assert (
        bleu("The cat was sitting on the mat.", [ref, "There is a cat on the mat.", "A cat is sitting on the mat."])
        > 0.25
    )
    assert bleu("The cat sat on mat.", ["The cat sat on mat.", "Cat mat.", "A cat is sitting on a mat."]) > 0.999
    assert bleu("The small cat sat.", ["The small cat sat.", "A cat was sitting.", "The cat is on the mat."]) > 0.999
    with pytest.raises(ValueError, match="Invalid inputs"):
        bleu("test", [])


def test_bleu_assertion_thresholds_and_inverse():
    ref = "The cat sat on the mat."
    assert check({"type": "bleu", "value": ref}, ref)[:1] == (True,)
    assert check(
        {"type": "bleu", "value": ["The cat sat on mat.", "The cat is sitting on mat."]}, "The cat sat on mat."
    )[0]
    passed, _, reason = check({"type": "bleu", "value": ref, "threshold": 0.8}, "The dog sat on the mat.")
    assert not passed and reason.startswith("BLEU score ") and reason.endswith("is less than threshold 0.8")
    assert check({"type": "not-bleu", "value": ref, "threshold": 0.8}, "The dog ran in the park.")[0]
    passed, _, reason = check({"type": "bleu", "value": ref}, "The dog ran in the park.")
    assert not passed and reason.endswith("is less than threshold 0.5")


# --- cost / latency: PF src/assertions/cost.ts, latency.ts, test/assertions/cost.test.ts, latency.test.ts
def test_cost_threshold_and_inverse():
    assert check({"type": "cost", "threshold": 0.001}, "x", cost=Decimal("0.0005"))[0]
    passed, _, reason = check({"type": "cost", "threshold": 0.001}, "x", cost=0.002)
    assert not passed and reason == "Cost 0.0020 is greater than threshold 0.001"
    passed, _, reason = check({"type": "not-cost", "threshold": 0.001}, "x", cost=0.0005)
    assert not passed and reason == "Cost 0.00050 is less than or equal to threshold 0.001"
    passed, _, reason = check({"type": "cost", "threshold": 0.001}, "x")
    assert not passed and reason == "Cost assertion does not support providers that do not return cost"
    # Without a threshold, a named metric records the raw cost and passes.
    assert check({"type": "cost", "metric": "spend"}, "x", cost=0.25)[:2] == (True, 0.25)
    assert "must set `metric`" in check({"type": "cost"}, "x", cost=0.25)[2]


def test_latency_threshold_and_inverse():
    assert check({"type": "latency", "threshold": 1000}, "x", latency_ms=900)[0]
    passed, _, reason = check({"type": "latency", "threshold": 1000}, "x", latency_ms=1500)
    assert not passed and reason == "Latency 1500ms is greater than threshold 1000ms"
    assert check({"type": "not-latency", "threshold": 1000}, "x", latency_ms=1500)[0]
    assert not check({"type": "latency", "threshold": 1000}, "x")[0]


# --- the test's combination: PF src/assertions/assertionsResult.ts, test/assertions/assertionsResult.test.ts
def test_weighted_score_threshold_and_no_assertions():
    specs = parse_assertions(
        [{"type": "contains", "value": "a", "weight": 3}, {"type": "contains", "value": "z", "weight": 1}],
        where="assertions",
    )
    facts = AnswerFacts(output="abc", latency_ms=None, cost=None, vars={})
    result = grade(specs, facts)
    assert (result.passed, result.score, result.reason) == (False, 0.75, 'Expected output to contain "z"')
    assert grade(specs, facts, threshold=0.7).passed
    below = grade(specs, facts, threshold=0.8)
    assert not below.passed and below.reason == "Aggregate score 0.75 < 0.8 threshold"
    empty = grade([], facts)
    assert (empty.passed, empty.score, empty.reason) == (True, 1.0, "No assertions")


# --- refusals
def errors_of(raw) -> list[str]:
    with pytest.raises(ValidationError) as caught:
        parse_assertions(raw, where="assertions")
    return caught.value.message_dict["assertions"]


def test_it_refuses_user_code_unknown_types_and_bad_values_naming_each_place():
    errors = errors_of(
        [
            {"type": "contains", "value": "ok"},
            {"type": "javascript", "value": "output.length < 10"},
            {"type": "foo"},
            {"type": "regex", "value": "("},
            {"type": "not-python", "value": "file://check.py"},
            {"type": "contains", "value": "x", "transform": "output.trim()"},
            {"type": "model-graded-factuality", "value": "is polite"},
            {"type": "contains"},
            {"type": "contains", "value": "x", "weight": -1},
        ]
    )
    assert errors[0].startswith("assert[1].type: 'javascript' is refused: it runs user code")
    assert errors[1] == "assert[2].type: unknown assertion type 'foo'."
    assert errors[2].startswith("assert[3].value: invalid regular expression")
    assert errors[3].startswith("assert[4].type: 'not-python' is refused")
    assert errors[4].startswith("assert[5].transform: refused, it runs user code")
    assert errors[5] == "assert[6].type: not yet supported: 'model-graded-factuality'."
    assert errors[6].startswith("assert[7].value:")
    assert errors[7].startswith("assert[8].weight:")
    assert errors_of("contains") == ["must be a list of assertions ({type, value, …})."]
    assert errors_of([{"type": "webhook", "value": "http://127.0.0.1/"}])[0].startswith("assert[0].type: 'webhook'")
