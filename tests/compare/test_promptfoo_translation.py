"""The promptfoo translation's pure rules, without a run: var texts as Nunjucks prints them, promptfoo's var
resolution, list expansion order, CSV `__expected` cells, Nunjucks detection and provider routing."""

import pytest

from compare.experiments.promptfoo.cases import csv_assertion, expand
from compare.experiments.promptfoo.detect import is_promptfoo
from compare.experiments.promptfoo.providers import read_providers
from compare.experiments.promptfoo.templates import js_text, unsupported_constructs, var_texts


@pytest.mark.parametrize(
    ("value", "text"),
    [
        ("plain", "plain"),
        (3, "3"),
        (2.0, "2"),
        (0.5, "0.5"),
        (True, "true"),
        (None, ""),
        (["a", "b", 3], "a,b,3"),
        ({"k": 1}, "[object Object]"),
    ],
)
def test_a_var_is_printed_as_javascript_prints_it(value, text):
    assert js_text(value) == text


def test_vars_naming_vars_are_resolved_and_a_trailing_newline_dropped():
    # promptfoo's resolveVariables: `{{name}}` in a var's value takes the other var's value; unknown names stay.
    assert var_texts({"greeting": "Hi {{name}}, {{unknown}}\n", "name": "Ada"}) == {
        "greeting": "Hi Ada, {{unknown}}",
        "name": "Ada",
    }


def test_list_vars_expand_to_their_product_the_first_varying_slowest():
    assert expand({"a": ["1", "2"], "b": "x", "c": ["p", "q"]}, disabled=False) == [
        {"a": "1", "b": "x", "c": "p"},
        {"a": "1", "b": "x", "c": "q"},
        {"a": "2", "b": "x", "c": "p"},
        {"a": "2", "b": "x", "c": "q"},
    ]
    assert expand({"a": ["x", "y"]}, disabled=True) == [{"a": ["x", "y"]}]
    # Only a list whose first item is text expands (promptfoo's generateVarCombinations).
    assert expand({"n": [1, 2], "o": [{"k": 1}], "e": []}, disabled=False) == [{"n": [1, 2], "o": [{"k": 1}], "e": []}]


@pytest.mark.parametrize(
    ("cell", "assertion"),
    [
        ("Paris", {"type": "equals", "value": "Paris"}),
        ("contains:Paris", {"type": "contains", "value": "Paris"}),
        ("not-icontains: paris ", {"type": "not-icontains", "value": "paris"}),
        ("contains-any:a, b,c", {"type": "contains-any", "value": ["a", "b", "c"]}),
        ("is-json", {"type": "is-json"}),
        ("levenshtein(3):kitten", {"type": "levenshtein", "value": "kitten", "threshold": 3.0}),
        ("rouge-n:the cat", {"type": "rouge-n", "value": "the cat", "threshold": 0.75}),
        ("similar:hello", {"type": "similar", "value": "hello", "threshold": 0.8}),
        ("grade:is polite", {"type": "llm-rubric", "value": "is polite"}),
        ("fn:output.length > 3", {"type": "javascript", "value": "output.length > 3"}),
        ("python:len(output) > 3", {"type": "python", "value": "len(output) > 3"}),
        ("nonsense:thing", {"type": "equals", "value": "nonsense:thing"}),
    ],
)
def test_a_csv_expected_cell_is_read_as_promptfoo_reads_it(cell, assertion):
    # promptfoo's src/csv.ts assertionFromString: legacy prefixes, the type regex with `not-` and `(threshold)`,
    # commas for the list types, default thresholds, and equals for anything else.
    assert csv_assertion(cell) == assertion


def test_only_plain_placeholders_pass():
    text = "{{ a }} {{b}} {{ c | upper }} {{ d.e }} {% if f %}x{% endif %} {# note #}"
    assert unsupported_constructs(text) == ["{{ c | upper }}", "{{ d.e }}", "{% if f %}", "{% endif %}", "{# note #}"]


def test_a_promptfoo_config_is_told_from_the_lab_s_own_file():
    assert is_promptfoo({"prompts": ["x"], "providers": ["openai:gpt-4o"]})
    assert is_promptfoo({"tests": []})
    assert not is_promptfoo({"models": [{"model": "openai:gpt-4o"}], "prompts": []})
    assert not is_promptfoo(["providers"])


def test_provider_ids_route_to_connections_with_promptfoo_s_defaults():
    problems = []
    specs = read_providers(
        [
            "openai:o3-mini",
            {"openai:chat:gpt-4o": {"config": {"temperature": 1}}},
            "openai:completion:davinci",
            {"id": "google:gemini-2.0-flash", "config": {"max_tokens": 5}},
        ],
        lambda where, message: problems.append(f"{where}: {message}"),
    )
    assert [(s.connection, s.model, s.params) for s in specs] == [
        ("openai", "o3-mini", {}),  # a reasoning model: promptfoo sends neither default
        ("openai", "gpt-4o", {"temperature": 1, "maxOutputTokens": 1024}),
        ("gemini", "gemini-2.0-flash", {}),
    ]
    assert problems[0].startswith("providers[3] (openai:completion:davinci): id: not a supported provider")
    assert problems[1].startswith("providers[4] (google:gemini-2.0-flash): config: max_tokens: not supported")
