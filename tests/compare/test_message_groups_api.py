"""The groups API with message lists: `shared_messages`, each variant's `messages` or its `prompt` shorthand
(exactly one), both returned; provider rules (prefill, context) refused at creation and at round start naming the
model; rounds' outputs carry the list sent (hidden while blind, as prompts are); rounds have `parent` and `turn`."""

import pytest

from compare.models import CompareGroup, Variant
from lab.services import connection_create
from tests.fixtures.compare_factories import INSTANT, make_group, start_round

KEY = "sk-test-messages-0123456789"
FEW_SHOT = [
    {"role": "user", "content": "Capital of France?"},
    {"role": "assistant", "content": "Paris."},
]

pytestmark = pytest.mark.django_db


def body(workspace, variants, **changes) -> dict:
    return {
        "workspace": workspace.pk,
        "title": "Capitals",
        "mode": "custom",
        "system_prompt": "Answer in one word.",
        "shared_messages": FEW_SHOT,
        "shared_variables": {"country": "Peru"},
        "variants": variants,
        **changes,
    }


def test_a_group_takes_shared_messages_and_each_variants_messages_or_prompt_and_returns_both(api, workspace):
    variants = [
        {"label": "Chat", "model": INSTANT, "messages": [{"role": "user", "content": "Capital of {{country}}?"}]},
        {"label": "Short", "model": INSTANT, "prompt": "{{country}}'s capital?"},
        {
            "label": "Prefilled",
            "model": INSTANT,
            "messages": [
                {"role": "user", "content": "Capital of {{country}}?"},
                {"role": "assistant", "content": "The capital is"},
            ],
        },
    ]
    response = api.post("/api/v1/groups/", body(workspace, variants), format="json")

    assert response.status_code == 201, response.json()
    data = response.json()
    assert data["shared_messages"] == FEW_SHOT
    assert [(v["prompt"], v["messages"]) for v in data["variants"]] == [
        ("Capital of {{country}}?", [{"role": "user", "content": "Capital of {{country}}?"}]),
        ("{{country}}'s capital?", [{"role": "user", "content": "{{country}}'s capital?"}]),
        ("Capital of {{country}}?", variants[2]["messages"]),
    ]
    group = CompareGroup.objects.get(pk=data["id"])
    assert group.shared_messages == FEW_SHOT
    assert Variant.objects.get(group=group, position=3).messages == variants[2]["messages"]


@pytest.mark.parametrize(
    ("variant", "field"),
    [
        ({"prompt": "Hi", "messages": [{"role": "user", "content": "Hi"}]}, "messages"),
        ({}, "prompt"),
    ],
)
def test_a_variant_gives_exactly_one_of_prompt_and_messages(api, workspace, variant, field):
    variants = [{"model": INSTANT, "prompt": "Hello"}, {"model": INSTANT, **variant}]
    response = api.post("/api/v1/groups/", body(workspace, variants), format="json")

    assert response.status_code == 400
    assert response.json() == {
        "variants": {
            "2": {field: [f"Give exactly one of prompt and messages{', not both' if field == 'messages' else ''}."]}
        }
    }


def test_a_malformed_message_is_a_400_naming_the_variant_message_and_field(api, workspace):
    variants = [
        {"model": INSTANT, "prompt": "Hello"},
        {"model": INSTANT, "messages": [{"role": "user", "content": "Hi"}, {"role": "tool", "content": "x"}]},
    ]
    response = api.post("/api/v1/groups/", body(workspace, variants), format="json")

    assert response.status_code == 400
    assert response.json() == {"variants": {"2": {"messages": {"2": {"role": ['"tool" is not a valid choice.']}}}}}


def test_a_rendering_rule_is_a_400_naming_the_variant_and_message(api, workspace):
    variants = [
        {"model": INSTANT, "prompt": "Hello"},
        {
            "label": "B",
            "model": INSTANT,
            "messages": [{"role": "user", "content": "Hi"}, {"role": "system", "content": "x"}],
        },
    ]
    response = api.post("/api/v1/groups/", body(workspace, variants), format="json")

    assert response.status_code == 400
    assert response.json()["variants"] == [
        "Variant 2 (B) message 2: a system message comes only first (the group has a system prompt); "
        "make it a user message or move it."
    ]


def test_a_prefill_is_refused_naming_the_model_where_the_provider_takes_none(api, workspace, fake_llm):
    connection_create(workspace=workspace, name="oa", kind="openai", base_url=fake_llm.openai_url, api_key=KEY)
    connection_create(workspace=workspace, name="an", kind="anthropic", base_url=fake_llm.openai_url, api_key=KEY)
    prefilled = [{"role": "user", "content": "JSON?"}, {"role": "assistant", "content": "{"}]
    variants = [
        {"label": "A", "model": "oa::fake", "messages": prefilled},
        {"model": "an::fake", "messages": prefilled},
    ]

    response = api.post("/api/v1/groups/", body(workspace, variants), format="json")

    assert response.status_code == 400
    assert response.json()["variants"] == [
        "Variant 1 (A) message 2: a trailing assistant message is a prefill, which oa::fake (OpenAI) does not take; "
        "end with a user message."
    ]


def test_a_conversation_longer_than_the_models_context_is_refused_at_creation_and_at_round_start(
    api, workspace, owner, fake_llm
):
    connection_create(workspace=workspace, name="or", kind="openrouter", base_url=fake_llm.openai_url, api_key=KEY)
    long = "word " * 8000  # about 10,000 tokens; fake-free's context is 8,192
    variants = [
        {"label": "A", "model": "or::fake-free", "prompt": "Summarise {{text}}"},
        {"model": INSTANT, "prompt": "Hi {{text}}"},
    ]

    response = api.post("/api/v1/groups/", body(workspace, variants, shared_variables={"text": long}), format="json")
    assert response.status_code == 400
    [message] = response.json()["variants"]
    assert message.startswith("Variant 1 (A): The conversation is about 10,0")
    assert "more than the context of or::fake-free (8,192 tokens)" in message

    created = api.post("/api/v1/groups/", body(workspace, variants, shared_variables={"text": "short"}), format="json")
    group_id = created.json()["id"]
    dataset = api.post(
        "/api/v1/datasets/",
        {"workspace": workspace.pk, "name": "Long", "rows": [{"vars": {"text": long}}]},
        format="json",
    ).json()["id"]
    run = api.post(f"/api/v1/groups/{group_id}/runs/", {"dataset": dataset}, format="json")
    assert run.status_code == 400
    [message] = run.json()["dataset"]
    assert message.startswith("Row 1: Variant 1 (A): The conversation is about 10,0") and "or::fake-free" in message


def test_a_round_has_parent_and_turn_and_its_outputs_the_messages_sent(api, workspace, owner):
    group = make_group(workspace, owner, system_prompt="Be brief.", shared_messages=FEW_SHOT)
    round_ = start_round(group, owner)
    for output in round_.outputs.all():
        output.messages = [{"role": "system", "content": "Be brief."}, *FEW_SHOT, {"role": "user", "content": "tea"}]
        output.save()

    data = api.get(f"/api/v1/rounds/{round_.pk}/").json()

    assert (data["parent"], data["turn"]) == (None, 1)
    assert [o["messages"] for o in data["outputs"]] == [
        [{"role": "system", "content": "Be brief."}, *FEW_SHOT, {"role": "user", "content": "tea"}]
    ] * 2
    assert api.get(f"/api/v1/groups/{group.pk}/").json()["rounds"][0]["turn"] == 1


def test_a_blind_round_hides_the_messages_as_it_hides_the_prompts(api, workspace, owner):
    group = make_group(workspace, owner, prompts=["One {{topic}}", "Two {{topic}}"], blind=True)
    round_ = start_round(group, owner)
    round_.outputs.update(messages=[{"role": "user", "content": "One tea"}])

    data = api.get(f"/api/v1/rounds/{round_.pk}/").json()

    assert [(o["rendered_prompt"], o["messages"]) for o in data["outputs"]] == [(None, None)] * 2


def test_a_clone_copies_the_shared_messages_and_each_variants_messages(api, workspace, owner):
    prefilled = [{"role": "user", "content": "Say {{topic}}"}, {"role": "assistant", "content": "Well,"}]
    group = make_group(workspace, owner, mode="custom", system_prompt="S", shared_messages=FEW_SHOT)
    Variant.objects.filter(group=group, position=2).update(messages=prefilled, prompt="Say {{topic}}")

    response = api.post(f"/api/v1/groups/{group.pk}/clone/", {}, format="json")

    assert response.status_code == 201, response.json()
    clone = response.json()
    assert clone["shared_messages"] == FEW_SHOT
    assert [v["messages"] for v in clone["variants"]] == [
        [{"role": "user", "content": "Say something about {{topic}}."}],
        prefilled,
    ]


def test_the_preview_renders_each_conversation_and_says_what_a_provider_merges(api, workspace, fake_llm):
    connection_create(workspace=workspace, name="an", kind="anthropic", base_url=fake_llm.openai_url, api_key=KEY)
    messages = [{"role": "user", "content": "Context: {{country}}."}, {"role": "user", "content": "Capital?"}]
    variants = [{"label": "A", "model": "an::fake", "messages": messages}]

    response = api.post("/api/v1/groups/preview/", body(workspace, variants), format="json")

    assert response.status_code == 200, response.json()
    [variant] = response.json()["variants"]
    assert variant["messages"] == [
        {"role": "system", "content": "Answer in one word."},
        *FEW_SHOT,
        {"role": "user", "content": "Context: Peru."},
        {"role": "user", "content": "Capital?"},
    ]
    assert variant["prompt"] == "Capital?" and variant["errors"] == []
    assert variant["input_tokens"] == round(
        len("Answer in one word.Capital of France?Paris.Context: Peru.Capital?") / 4
    )
    assert variant["warnings"] == [
        "Variant 1 (A) message 2: an::fake (Anthropic) takes alternating user and assistant messages, so this user "
        "message is sent merged with the one before it."
    ]
