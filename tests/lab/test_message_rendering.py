"""Message lists through the one renderer: system prompt, then shared messages, then the variant's; every refusal
names the variant, the message and the reason; provider rules (alternation, prefill, context) from message_rules."""

import pytest

from lab.providers.message_rules import Target, alternating
from lab.templating import VariantTemplate, render_variants

FEW_SHOT = [
    {"role": "user", "content": "Capital of {{country_1}}?"},
    {"role": "assistant", "content": "Paris."},
]


def one(messages, *, system="", shared=(), variables=None, target=None, overrides=None):
    template = VariantTemplate(1, "A", "", overrides or {}, messages=messages, target=target)
    rendered = render_variants(
        system_prompt=system,
        variables=variables if variables is not None else {"country_1": "France", "country": "Peru"},
        variants=[template],
        shared_messages=shared,
    )
    return rendered.variants[0]


def test_system_then_shared_then_the_variants_messages_rendered_with_shared_variables_then_overrides():
    variant = one(
        [{"role": "user", "content": "Capital of {{country}}?"}, {"role": "assistant", "content": "The capital is"}],
        system="Answer for {{reader}}.",
        shared=FEW_SHOT,
        variables={"country_1": "France", "country": "Peru", "reader": "children"},
        overrides={"reader": "experts"},
    )

    assert variant.errors == []
    assert variant.messages == [
        {"role": "system", "content": "Answer for experts."},
        {"role": "user", "content": "Capital of France?"},
        {"role": "assistant", "content": "Paris."},
        {"role": "user", "content": "Capital of Peru?"},
        {"role": "assistant", "content": "The capital is"},
    ]
    assert variant.system_prompt == "Answer for experts." and variant.prompt == "Capital of Peru?"


def test_the_prompt_shorthand_is_one_user_message_and_renders_as_before():
    template = VariantTemplate(position=1, label="A", prompt="Hi {{name}}.", variables={})
    variant = render_variants(system_prompt="Be kind.", variables={"name": "Ada"}, variants=[template]).variants[0]

    assert variant.messages == [{"role": "system", "content": "Be kind."}, {"role": "user", "content": "Hi Ada."}]
    assert (variant.system_prompt, variant.prompt) == ("Be kind.", "Hi Ada.")
    missing = render_variants(system_prompt="", variables={}, variants=[template]).errors
    assert missing == [
        "Variant 1 (A) uses {{name}}, which has no value: set it in the shared variables or this variant's."
    ]


def test_a_missing_variable_names_the_variant_the_message_and_the_variable():
    variant = one(
        [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "Hello {{who}}"}], shared=FEW_SHOT
    )

    assert variant.errors == [
        "Variant 1 (A) message 2 uses {{who}}, which has no value: set it in the shared variables or this variant's."
    ]
    shared = one([{"role": "user", "content": "Go"}], shared=FEW_SHOT, variables={})
    assert shared.errors[0].startswith("Variant 1 (A) shared message 1 uses {{country_1}}, which has no value")


@pytest.mark.parametrize(
    ("messages", "system", "expected"),
    [
        (
            [{"role": "user", "content": "Hi"}, {"role": "system", "content": "Late"}],
            "",
            "Variant 1 (A) message 2: a system message comes only first; make it a user message or move it.",
        ),
        (
            [{"role": "system", "content": "Early"}, {"role": "user", "content": "Hi"}],
            "Group system prompt",
            "Variant 1 (A) message 1: a system message comes only first (the group has a system prompt); "
            "make it a user message or move it.",
        ),
        (
            [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "  "}],
            "",
            "Variant 1 (A) message 2: content is empty; write it or remove the message.",
        ),
        (
            [{"role": "user", "content": "Hi"}, {"role": "tool", "content": "x"}],
            "",
            "Variant 1 (A) message 2: unknown role 'tool'; a role is one of system, user, assistant.",
        ),
        (
            [{"role": "assistant", "content": "Only me"}],
            "",
            "Variant 1 (A): messages: give at least one user message.",
        ),
    ],
)
def test_each_refusal_names_the_variant_the_message_and_the_reason(messages, system, expected):
    assert one(messages, system=system).errors == [expected]


def test_a_system_message_may_open_the_conversation_when_the_group_has_no_system_prompt():
    variant = one([{"role": "system", "content": "Be {{country}}."}, {"role": "user", "content": "Hi"}])

    assert variant.errors == [] and variant.system_prompt == "Be Peru."
    assert variant.messages[0] == {"role": "system", "content": "Be Peru."}


def test_a_shared_system_message_after_the_group_system_prompt_is_named_as_shared():
    variant = one([{"role": "user", "content": "Hi"}], system="S", shared=[{"role": "system", "content": "T"}])

    assert variant.errors[0].startswith("Variant 1 (A) shared message 1: a system message comes only first")


ANTHROPIC = Target(kind="anthropic", model="claude::claude-sonnet-4-5")
GEMINI = Target(kind="gemini", model="gem::gemini-2.5-flash")


@pytest.mark.parametrize("target", [ANTHROPIC, GEMINI])
def test_adjacent_messages_of_one_role_are_merged_for_alternating_providers_with_a_warning(target):
    messages = [
        {"role": "user", "content": "Context: {{country}}."},
        {"role": "user", "content": "Question?"},
    ]
    variant = one(messages, shared=FEW_SHOT, target=target)

    assert variant.errors == []
    assert variant.warnings == [
        f"Variant 1 (A) message 2: {target.model} ({'Anthropic' if target.kind == 'anthropic' else 'Gemini'}) takes "
        "alternating user and assistant messages, so this user message is sent merged with the one before it."
    ]
    assert alternating(variant.messages)[-1] == {"role": "user", "content": "Context: Peru.\n\nQuestion?"}
    # Not merged, nor warned about, for providers that take any order.
    assert one(messages, target=Target("openai", "o::gpt-4.1")).warnings == []


def test_a_conversation_starting_with_an_assistant_message_is_refused_for_alternating_providers():
    messages = [{"role": "assistant", "content": "Hello!"}, {"role": "user", "content": "Hi"}]

    assert one(messages, system="S", target=ANTHROPIC).errors == [
        "Variant 1 (A) message 1: claude::claude-sonnet-4-5 (Anthropic) needs the conversation to start with a user "
        "message after the system prompt; this one starts with an assistant message."
    ]
    assert one(messages, target=Target("openrouter", "or::x")).errors == []


@pytest.mark.parametrize(("kind", "who"), [("openai", "OpenAI"), ("openai_compatible", "an OpenAI-compatible server")])
def test_a_prefill_is_refused_naming_the_model_where_the_provider_does_not_take_one(kind, who):
    messages = [{"role": "user", "content": "JSON please"}, {"role": "assistant", "content": "{"}]

    assert one(messages, target=Target(kind, "conn::gpt-4.1")).errors == [
        f"Variant 1 (A) message 2: a trailing assistant message is a prefill, which conn::gpt-4.1 ({who}) does not "
        "take; end with a user message."
    ]


@pytest.mark.parametrize("kind", ["anthropic", "openrouter", "gemini", "simulated"])
def test_a_prefill_is_accepted_where_the_provider_continues_it(kind):
    messages = [{"role": "user", "content": "JSON please"}, {"role": "assistant", "content": "{"}]

    assert one(messages, target=Target(kind, "conn::m")).errors == []


def test_a_conversation_longer_than_the_models_context_is_refused_naming_the_model():
    long = "word " * 4000  # 20,000 characters: about 5,000 tokens
    target = Target("openrouter", "or::small", context_length=4096)

    [error] = one([{"role": "user", "content": long}], shared=FEW_SHOT, target=target).errors
    assert error.startswith("Variant 1 (A): The conversation is about 5,00")
    assert "more than the context of or::small (4,096 tokens)" in error
    # The answer's max_tokens must fit too; a context the catalog does not know is not checked.
    fits = Target("openrouter", "or::small", context_length=8192, max_tokens=4000)
    assert "plus max_tokens 4,000" in one([{"role": "user", "content": long}], target=fits).errors[0]
    assert one([{"role": "user", "content": long}], target=Target("openrouter", "or::x")).errors == []
