"""Templating: `{{name}}` placeholders filled once, literally, with errors and warnings that name the variant."""

import pytest

from lab.templating import VariantTemplate, missing_names, render, render_variants


def variants(*prompts: str, overrides: list[dict] | None = None) -> list[VariantTemplate]:
    overrides = overrides or [{}] * len(prompts)
    return [
        VariantTemplate(position=i, label=label, prompt=prompt, variables=extra)
        for i, (label, prompt, extra) in enumerate(zip("ABCDE", prompts, overrides, strict=False), start=1)
    ]


def test_it_fills_shared_variables_then_the_variants_overrides():
    rendered = render_variants(
        system_prompt="You write for {{audience}}.",
        variables={"audience": "children", "topic": "rain"},
        variants=variants("Explain {{topic}}.", "Explain {{topic}}.", overrides=[{}, {"audience": "experts"}]),
    )
    assert [(v.system_prompt, v.prompt) for v in rendered.variants] == [
        ("You write for children.", "Explain rain."),
        ("You write for experts.", "Explain rain."),
    ]
    assert rendered.errors == []


def test_a_value_containing_braces_is_inserted_literally_and_not_rendered_again():
    result = render("Q: {{question}}", {"question": "What is {{secret}}?", "secret": "LEAK"})
    assert result.text == "Q: What is {{secret}}?"
    assert result.missing == ()


def test_hostile_template_syntax_is_sent_as_written():
    template = "{{x.__class__}} {% if True %}yes{% endif %} {0} {x} {{ x|upper }} %(x)s ${x}"
    result = render(template, {"x": "value"})
    assert result.text == template
    assert result.used == frozenset()


def test_hostile_values_are_inserted_literally():
    values = {"a": "{% include '/etc/passwd' %}", "b": "{0.__class__}", "c": "{{c}}", "d": "%(d)s"}
    assert render("{{a}}|{{b}}|{{c}}|{{d}}", values).text == "{% include '/etc/passwd' %}|{0.__class__}|{{c}}|%(d)s"


def test_placeholders_allow_spaces_inside_the_braces():
    assert render("{{ name }} and {{name | json}}", {"name": "Ada"}).text == 'Ada and "Ada"'


def test_json_and_yaml_filters_format_structured_values():
    data = {"name": "Ada", "langs": ["en", "fr"]}
    as_json = render("{{data|json}}", {"data": data}).text
    assert as_json == '{\n  "name": "Ada",\n  "langs": [\n    "en",\n    "fr"\n  ]\n}'
    assert render("{{data|yaml}}", {"data": data}).text == "name: Ada\nlangs:\n- en\n- fr"
    assert render("{{word|yaml}}", {"word": "plain"}).text == "plain"


def test_plain_placeholders_show_non_text_values_as_json():
    values = {"n": 3, "ok": True, "items": [1, 2], "nothing": None}
    assert render("{{n}} {{ok}} {{items}} {{nothing}}", values).text == "3 true [1, 2] null"


def test_a_missing_variable_is_an_error_naming_the_variant_and_the_variable():
    rendered = render_variants(
        system_prompt="",
        variables={"topic": "tea"},
        variants=variants("About {{topic}}.", "About {{topic}} for {{reader}}."),
    )
    assert rendered.variants[0].errors == []
    [error] = rendered.variants[1].errors
    assert "Variant 2 (B)" in error
    assert "{{reader}}" in error


def test_a_variable_missing_in_the_system_prompt_names_every_variant_that_lacks_it():
    rendered = render_variants(
        system_prompt="Tone: {{tone}}",
        variables={},
        variants=variants("One", "Two", overrides=[{"tone": "dry"}, {}]),
    )
    assert rendered.variants[0].errors == []
    assert len(rendered.errors) == 1 and rendered.errors[0].startswith("Variant 2 (B)")


def test_a_variable_used_by_some_variants_but_not_others_is_a_warning():
    rendered = render_variants(
        system_prompt="",
        variables={"topic": "tea", "tone": "dry"},
        variants=variants("About {{topic}} in a {{tone}} tone.", "About {{topic}}.", "{{topic}}!"),
    )
    assert rendered.errors == []
    assert rendered.warnings == ["{{tone}} is used by some variants but not by Variant 2 (B), Variant 3 (C)."]


def test_an_unused_shared_variable_and_a_lookalike_placeholder_are_warnings():
    rendered = render_variants(
        system_prompt="",
        variables={"topic": "tea", "unused": 1},
        variants=variants("{{topic}} {{topic.upper}}", "{{topic}}"),
    )
    assert "The shared variable 'unused' is not used by any variant." in rendered.warnings
    assert any("{{topic.upper}} is not a placeholder" in w for w in rendered.variants[0].warnings)


@pytest.mark.parametrize(
    "template, variables",
    [
        ("{{b}} then {{a}} then {{ b }} and {{c|json}}", {"a": 1}),
        ("{{ x | yaml }} {{y}}{{y}} {{z}}", {"z": ""}),
        ("{{picture}} shows {{subject}}", {"picture": {"$file": 7}}),  # a file reference renders in parts
        ("{{not a placeholder}} {% if x %} {{ok}}", {}),
        ("nothing to fill", {"a": 1}),
    ],
)
def test_the_missing_names_are_what_rendering_reports_in_its_order(template, variables):
    assert missing_names(template, variables) == render(template, variables).missing
