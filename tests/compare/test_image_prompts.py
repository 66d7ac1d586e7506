"""Images in prompts: a variable holding a file (`{"$file": id}`) becomes an image part where `{{var}}` stands in a
user message, sent over real HTTP in each provider's wire format (OpenAI `image_url` data URL, Anthropic base64
`image`, Gemini `inline_data`) and counted in usage; another workspace's file and a text-only model are refused by
name."""

import base64

import pytest
from django.core.exceptions import ValidationError

from compare.datasets.services import dataset_create
from compare.models import OutputStatus
from compare.rounds.execution import round_execute
from compare.rounds.start import round_start
from lab.fake_llm.wire import IMAGE_TOKENS
from lab.files.services import file_create
from lab.services import connection_create
from tests.fixtures.compare_factories import make_group, make_round
from tests.fixtures.factories import make_user, make_workspace
from tests.fixtures.images import image_bytes

pytestmark = pytest.mark.django_db(transaction=True)

PROMPT = "Look: {{photo}} What colour is it, in {{style}}?"


def stored_image(workspace, owner, kind="png"):
    import io

    data = image_bytes(kind, size=(4, 4))
    stored, _ = file_create(workspace=workspace, actor=owner, stream=io.BytesIO(data), name=f"p.{kind}")
    return stored, base64.b64encode(data).decode()


def kinds_group(workspace, owner, fake_llm, models, variables):
    for kind, url in (
        ("openai", fake_llm.openai_url),
        ("anthropic", fake_llm.anthropic_url),
        ("gemini", fake_llm.gemini_url),
    ):
        connection_create(workspace=workspace, name=f"img-{kind}", kind=kind, base_url=url, api_key="sk-test")
    return make_group(
        workspace, owner, models=models, prompts=[PROMPT] * len(models), shared_variables=variables, mode="custom"
    )


def test_an_image_part_is_sent_at_its_place_in_each_wire_format(workspace, owner, fake_llm, media_root):
    stored, data = stored_image(workspace, owner)
    names = {kind: fake_llm.model(tokens=3) for kind in ("openai", "anthropic", "gemini")}
    models = [f"img-{kind}::{name}" for kind, name in names.items()]
    group = kinds_group(workspace, owner, fake_llm, models, {"photo": {"$file": stored.pk}, "style": "one word"})
    round_ = make_round(group)
    round_execute(round_id=round_.pk)

    outputs = list(round_.outputs.order_by("variant__position"))
    assert [o.status for o in outputs] == [OutputStatus.OK] * 3, [o.error for o in outputs]
    after = " What colour is it, in one word?"
    assert fake_llm.scenario(names["openai"])["last_request"]["body"]["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Look: "},
                {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{data}"}},
                {"type": "text", "text": after},
            ],
        }
    ]
    assert fake_llm.scenario(names["anthropic"])["last_request"]["body"]["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Look: "},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": data}},
                {"type": "text", "text": after},
            ],
        }
    ]
    assert fake_llm.scenario(names["gemini"])["last_request"]["body"]["contents"] == [
        {
            "role": "user",
            "parts": [{"text": "Look: "}, {"inline_data": {"mime_type": "image/png", "data": data}}, {"text": after}],
        }
    ]
    text_words = len("Look: What colour is it, in one word?".split())
    assert [o.input_tokens for o in outputs] == [text_words + IMAGE_TOKENS] * 3
    # The record keeps the reference, not the bytes; the rendered prompt names the image.
    assert outputs[0].messages[0]["content"][1] == {"type": "image", "file": stored.pk, "variable": "photo"}
    assert outputs[0].rendered_prompt == "Look: [image: photo] What colour is it, in one word?"


def test_a_round_whose_variable_names_another_workspaces_file_fails_naming_it(workspace, owner, fake_llm, media_root):
    # Checked when the comparison is saved (below); the worker checks again, as a round's snapshot is its own.
    stranger = make_user("stranger-img")
    theirs, _ = stored_image(make_workspace(stranger, "Theirs"), stranger)
    group = kinds_group(
        workspace, owner, fake_llm, [f"img-openai::{fake_llm.model()}"] * 2, {"style": "x", "photo": "-"}
    )
    round_ = make_round(group)
    round_.variables = {"photo": {"$file": theirs.pk}, "style": "x"}
    round_.save(update_fields=["variables"])
    round_execute(round_id=round_.pk)
    for output in round_.outputs.all():
        assert output.status == OutputStatus.ERROR
        assert output.error == f"{{{{photo}}}} holds file {theirs.pk}, which is not a file of this workspace."


def test_a_model_known_not_to_take_images_is_refused_naming_it(workspace, owner, fake_llm, media_root):
    stored, _ = stored_image(workspace, owner)
    models = ["img-openai::o3-mini", f"img-openai::{fake_llm.model()}"]
    with pytest.raises(ValidationError) as refused:
        kinds_group(workspace, owner, fake_llm, models, {"photo": {"$file": stored.pk}, "style": "x"})
    assert refused.value.message_dict["variants"] == [
        "Variant 1 (A): img-openai::o3-mini does not take images (the model catalog says so), and this conversation "
        "holds one; pick a model that reads images or remove the image."
    ]
    assert fake_llm.scenario("o3-mini")["last_request"] == {}


def test_a_comparison_naming_another_workspaces_file_is_refused_naming_the_variable(api, workspace, owner, media_root):
    stranger = make_user("stranger-img2")
    theirs, _ = stored_image(make_workspace(stranger, "Theirs"), stranger)
    body = {
        "workspace": workspace.pk,
        "mode": "models",
        "shared_variables": {"photo": {"$file": theirs.pk}, "style": "x"},
        "variants": [{"label": "A", "model": "simulated::writer", "prompt": PROMPT}] * 2,
    }
    response = api.post("/api/v1/groups/", body, format="json")
    assert response.status_code == 400
    assert response.json()["shared_variables"] == [f"photo: file {theirs.pk} is not a file of this workspace."]
    body["shared_variables"]["photo"] = {"$file": 10**9}
    missing = api.post("/api/v1/groups/", body, format="json").json()
    assert missing["shared_variables"] == [f"photo: file {10**9} is not a file of this workspace."]


def test_the_comparison_page_shows_the_image_of_the_rendered_input(client, workspace, owner, fake_llm, media_root):
    stored, _ = stored_image(workspace, owner)
    group = kinds_group(
        workspace,
        owner,
        fake_llm,
        [f"img-openai::{fake_llm.model()}"] * 2,
        {"photo": {"$file": stored.pk}, "style": "x"},
    )
    round_ = make_round(group)
    round_execute(round_id=round_.pk)
    client.force_login(owner)
    page = client.get(f"/compare/{group.pk}/").content.decode()
    assert page.count(f'<img src="/api/v1/files/{stored.pk}/" alt="Image photo" loading="lazy">') == 2


def test_the_preview_and_the_round_give_an_image_message_as_parts(api, workspace, owner, fake_llm, media_root):
    stored, _ = stored_image(workspace, owner)
    variables = {"photo": {"$file": stored.pk}, "style": "x"}
    group = kinds_group(workspace, owner, fake_llm, [f"img-openai::{fake_llm.model()}"] * 2, variables)
    expected = [
        {"type": "text", "text": "Look: "},
        {"type": "image", "file": stored.pk, "variable": "photo"},
        {"type": "text", "text": " What colour is it, in x?"},
    ]
    preview = api.post(
        "/api/v1/groups/preview/",
        {
            "workspace": workspace.pk,
            "shared_variables": variables,
            "variants": [{"prompt": PROMPT, "model": group.variants.first().model}],
        },
        format="json",
    )
    assert preview.status_code == 200, preview.json()
    assert preview.json()["variants"][0]["messages"] == [{"role": "user", "content": expected}]
    round_ = make_round(group)
    round_execute(round_id=round_.pk)
    output = api.get(f"/api/v1/rounds/{round_.pk}/").json()["outputs"][0]
    assert output["messages"] == [{"role": "user", "content": expected}]


def test_a_run_over_a_dataset_row_naming_another_workspaces_file_is_refused_naming_row_and_variable(
    workspace, owner, fake_llm, media_root
):
    stranger = make_user("stranger-img3")
    theirs, _ = stored_image(make_workspace(stranger, "Theirs"), stranger)
    ours, _ = stored_image(workspace, owner, kind="gif")
    group = kinds_group(
        workspace, owner, fake_llm, [f"img-openai::{fake_llm.model()}"] * 2, {"photo": {"$file": ours.pk}, "style": "x"}
    )
    rows = [
        {"name": "ok", "vars": {"photo": {"$file": ours.pk}}},
        {"name": "bad", "vars": {"photo": {"$file": theirs.pk}}},
    ]
    dataset = dataset_create(workspace=workspace, user=owner, name="Mixed", rows=rows)
    with pytest.raises(ValidationError) as refused:
        round_start(group=group, user=owner, dataset=dataset, enqueue=False)
    assert refused.value.message_dict["dataset"] == [
        f"Row 2 (bad): photo: file {theirs.pk} is not a file of this workspace."
    ]
