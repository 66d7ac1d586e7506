"""Rendering a file variable: `{{var}}` of a `{"$file": id}` value becomes an image part at its place in a user
message; elsewhere (the system prompt, an assistant turn) it is refused naming the variable; filters keep it JSON."""

from lab.providers.message_rules import IMAGE_TOKENS_ESTIMATE, Target, alternating, estimate_input_tokens
from lab.templating import VariantTemplate, render, render_variants

PHOTO = {"$file": 7}


def test_an_image_variable_becomes_a_part_between_the_text_around_it():
    rendered = render("Before {{photo}} after {{word}}.", {"photo": PHOTO, "word": "tea"})
    assert rendered.content == [
        {"type": "text", "text": "Before "},
        {"type": "image", "file": 7, "variable": "photo"},
        {"type": "text", "text": " after tea."},
    ]
    assert rendered.text == "Before [image: photo] after tea."


def test_a_message_without_an_image_stays_text_and_a_filter_keeps_the_reference_as_json():
    assert render("Only {{word}}", {"photo": PHOTO, "word": "tea"}).content == "Only tea"
    assert render("{{photo|json_line}}", {"photo": PHOTO}).content == '{"$file": 7}'
    assert render("{{photo}}", {"photo": {"$file": 7, "extra": 1}}).parts is None


def test_an_image_in_the_system_prompt_or_an_assistant_message_is_refused_naming_it():
    in_system = render_variants(
        system_prompt="See {{photo}}", variables={"photo": PHOTO}, variants=[VariantTemplate(1, "A", "Hi")]
    )
    assert in_system.errors == [
        "Variant 1 (A) system prompt: {{photo}} holds an image; an image goes in a user message."
    ]
    messages = [{"role": "user", "content": "Hi"}, {"role": "assistant", "content": "{{photo}}"}]
    in_assistant = render_variants(
        system_prompt="", variables={"photo": PHOTO}, variants=[VariantTemplate(1, "A", "", messages=messages)]
    )
    assert in_assistant.errors == [
        "Variant 1 (A) message 2: {{photo}} holds an image; an image goes in a user message, not assistant."
    ]


def test_adjacent_user_messages_with_images_merge_without_loss_for_alternating_providers():
    image = {"type": "image", "file": 7, "variable": "photo"}
    merged = alternating([{"role": "user", "content": "First"}, {"role": "user", "content": [image]}])
    assert merged == [
        {"role": "user", "content": [{"type": "text", "text": "First"}, {"type": "text", "text": "\n\n"}, image]}
    ]


def test_an_image_counts_in_the_estimate_and_a_text_only_model_is_refused_by_name():
    messages = [{"role": "user", "content": [{"type": "image", "file": 7, "variable": "photo"}]}]
    assert estimate_input_tokens(messages) == IMAGE_TOKENS_ESTIMATE
    variants = [VariantTemplate(1, "A", "{{photo}}", target=Target(kind="openai", model="openai::gpt-3.5-turbo"))]
    refused = render_variants(system_prompt="", variables={"photo": PHOTO}, variants=variants)
    assert refused.errors == [
        "Variant 1 (A): openai::gpt-3.5-turbo does not take images (the model catalog says so), and this conversation "
        "holds one; pick a model that reads images or remove the image."
    ]
    unknown = [VariantTemplate(1, "A", "{{photo}}", target=Target(kind="openai", model="local::my-own-model"))]
    assert render_variants(system_prompt="", variables={"photo": PHOTO}, variants=unknown).errors == []
