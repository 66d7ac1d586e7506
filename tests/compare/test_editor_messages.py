"""The editor's server side with message lists: "save and run" takes each variant's messages and the shared
few-shot block, refusals name the variant and the message (or the shared message) by number, the preview renders
each whole conversation with its token estimate, and clone and edit brings the messages back."""

import json

import pytest

from compare.models import CompareGroup, Mode
from lab.providers.message_rules import estimate_input_tokens
from tests.compare.test_pages_editor import editor_initial, post_json, save_body
from tests.fixtures.compare_factories import INSTANT

pytestmark = pytest.mark.django_db

FEW_SHOT = [
    {"role": "user", "content": "Greet Grace."},
    {"role": "assistant", "content": "Hello, Grace!"},
]


@pytest.fixture
def as_owner(client, owner):
    client.force_login(owner)
    return client


def chat_body(**changes) -> dict:
    changes = {"system_prompt": "You write greetings.", "shared_messages": FEW_SHOT, **changes}
    return save_body(
        variants=[
            {"label": "Plain", "model": INSTANT, "prompt": "Greet {{name}}.", "variables": {}},
            {
                "label": "Prefilled",
                "model": INSTANT,
                "messages": [
                    {"role": "user", "content": "Greet {{name}} warmly."},
                    {"role": "assistant", "content": "Dear {{name}},"},
                ],
                "variables": {},
            },
        ],
        **changes,
    )


def test_saving_keeps_each_variant_s_messages_and_the_shared_few_shot(as_owner, workspace):
    response = post_json(as_owner, f"/w/{workspace.pk}/compare/save/", chat_body())
    assert response.status_code == 201, response.json()
    group = CompareGroup.objects.get(pk=response.json()["group"])
    assert group.shared_messages == FEW_SHOT
    plain, prefilled = group.variants.order_by("position")
    assert plain.messages == [{"role": "user", "content": "Greet {{name}}."}] and plain.prompt == "Greet {{name}}."
    assert prefilled.messages[-1] == {"role": "assistant", "content": "Dear {{name}},"}
    assert prefilled.prompt == "Greet {{name}} warmly."  # the last user message


def test_a_bad_message_is_refused_naming_the_variant_and_the_message(as_owner, workspace):
    body = chat_body()
    body["variants"][1]["messages"][1] = {"role": "wizard", "content": "Dear {{name}},"}
    response = post_json(as_owner, f"/w/{workspace.pk}/compare/save/", body)
    assert response.status_code == 400
    [problem] = response.json()["errors"]["variants"]
    assert problem.startswith("Variant 2: message 2: role: ")


def test_a_bad_shared_message_is_refused_naming_it(as_owner, workspace):
    response = post_json(
        as_owner, f"/w/{workspace.pk}/compare/save/", chat_body(shared_messages=[FEW_SHOT[0], {"role": "user"}])
    )
    assert response.status_code == 400
    assert response.json()["errors"]["shared_messages"] == ["Shared message 2: content: This field is required."]


def test_a_missing_variable_names_the_variant_and_the_message_that_uses_it(as_owner, workspace):
    body = chat_body()
    body["variants"][1]["messages"][1]["content"] = "Dear {{title}} {{name}},"
    response = post_json(as_owner, f"/w/{workspace.pk}/compare/save/", body)
    assert response.status_code == 400
    [problem] = response.json()["errors"]["variants"]
    assert problem.startswith("Variant 2 (Prefilled) message 2 uses {{title}}, which has no value")


def test_a_system_message_after_the_system_prompt_is_refused_naming_it(as_owner, workspace):
    body = chat_body()
    body["variants"][0] = {**body["variants"][0], "prompt": None}
    body["variants"][0].pop("prompt")
    body["variants"][0]["messages"] = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]
    response = post_json(as_owner, f"/w/{workspace.pk}/compare/save/", body)
    assert response.status_code == 400
    assert any(
        p.startswith("Variant 1 (Plain) message 1: a system message comes only first")
        for p in response.json()["errors"]["variants"]
    ), response.json()


def test_the_preview_renders_each_whole_conversation_with_its_token_estimate(as_owner, workspace):
    body = chat_body()
    preview = {k: body[k] for k in ("mode", "system_prompt", "shared_messages", "shared_variables", "variants")}
    response = as_owner.post(
        "/api/v1/groups/preview/", json.dumps({**preview, "workspace": workspace.pk}), content_type="application/json"
    )
    assert response.status_code == 200, response.json()
    plain, prefilled = response.json()["variants"]
    assert prefilled["messages"] == [
        {"role": "system", "content": "You write greetings."},
        *FEW_SHOT,
        {"role": "user", "content": "Greet Ada warmly."},
        {"role": "assistant", "content": "Dear Ada,"},
    ]
    assert plain["messages"][-1] == {"role": "user", "content": "Greet Ada."}
    assert prefilled["input_tokens"] == estimate_input_tokens(prefilled["messages"]) > plain["input_tokens"] > 0
    assert plain["errors"] == prefilled["errors"] == []


def test_clone_and_edit_fills_the_editor_with_the_messages(as_owner, workspace):
    group = post_json(as_owner, f"/w/{workspace.pk}/compare/save/", chat_body()).json()["group"]
    initial = editor_initial(as_owner.get(f"/compare/{group}/edit/").content.decode())
    assert initial["shared_messages"] == FEW_SHOT
    assert initial["variants"][1]["messages"][-1] == {"role": "assistant", "content": "Dear {{name}},"}


def test_the_editor_page_has_the_few_shot_block_and_no_longer_a_fixed_prompt_box(as_owner, workspace):
    html = as_owner.get(f"/w/{workspace.pk}/compare/new/").content.decode()
    assert 'data-role="shared-messages"' in html and 'data-role="model-messages"' in html
    assert Mode.MODELS in html
