"""The prompt library keeps message lists: a version is stored from text (one user message) or from messages, the
API returns them, refusals name the message, the diff of two versions goes message by message (with a word diff
inside a changed message), the YAML library round-trips them, the page shows them, and versions made before
messages existed become one user message."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from rest_framework.test import APIClient

from compare.models import Variant
from compare.prompts import library
from compare.prompts import services as prompts
from compare.prompts.diff import messages_diff
from compare.prompts.models import PromptVersion
from compare.prompts.selectors import runs_version, version_variants
from tests.fixtures.compare_factories import INSTANT
from tests.fixtures.factories import make_workspace

pytestmark = pytest.mark.django_db

FEW_SHOT = [
    {"role": "system", "content": "You label support tickets."},
    {"role": "user", "content": "My parcel is late."},
    {"role": "assistant", "content": "shipping"},
    {"role": "user", "content": "Label: {{ticket}}"},
]


def user(text):
    return {"role": "user", "content": text}


def test_a_version_stores_its_messages_and_its_text_is_the_last_user_message(api, workspace):
    response = api.post(
        f"/api/v1/workspaces/{workspace.pk}/prompts/",
        {"name": "Labeller", "messages": FEW_SHOT, "message": "few-shot"},
        format="json",
    )
    assert response.status_code == 201, response.json()
    [version] = response.json()["versions"]
    assert version["messages"] == FEW_SHOT and version["text"] == "Label: {{ticket}}"
    stored = PromptVersion.objects.get(pk=version["id"])
    assert stored.messages == FEW_SHOT and stored.text == "Label: {{ticket}}"


def test_a_version_given_as_text_is_one_user_message(api, workspace):
    response = api.post(
        f"/api/v1/workspaces/{workspace.pk}/prompts/", {"name": "Plain", "text": "Summarise {{t}}."}, format="json"
    )
    assert response.status_code == 201, response.json()
    assert response.json()["versions"][0]["messages"] == [user("Summarise {{t}}.")]


@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        ([user("a"), {"role": "robot", "content": "b"}], "message 2: unknown role 'robot'; a role is one of system"),
        ([user("a"), {"role": "system", "content": "late"}], "message 2: a system message may only come first"),
        ([{"role": "user"}], "message 1: content: give the message's text"),
        ([user("a"), {"role": "assistant", "content": " "}], "message 2: content is empty"),
        ([{"role": "assistant", "content": "only"}], "give at least one user message"),
        ([], "give at least one message"),
        ("just text", "a list of messages"),
    ],
)
def test_a_bad_message_list_is_refused_naming_the_message(api, workspace, messages, expected):
    response = api.post(
        f"/api/v1/workspaces/{workspace.pk}/prompts/", {"name": "Bad", "messages": messages}, format="json"
    )
    assert response.status_code == 400
    assert any(expected in problem for problem in response.json()["messages"]), response.json()


def test_text_and_messages_together_are_refused(api, workspace):
    response = api.post(
        f"/api/v1/workspaces/{workspace.pk}/prompts/",
        {"name": "Both", "text": "x", "messages": [user("y")]},
        format="json",
    )
    assert response.status_code == 400 and "not both" in response.json()["messages"][0]


def test_messages_diff_pairs_the_closest_messages_and_marks_words_inside_them():
    old = [*FEW_SHOT]
    new = [FEW_SHOT[0], user("Label this ticket: {{ticket}}"), {"role": "assistant", "content": "Label:"}]
    changes = [(c.op, c.old_position, c.new_position) for c in messages_diff(old, new)]
    # The few-shot pair went, the question was edited, and a prefill was added.
    expected = [("equal", 1, 1), ("removed", 2, None), ("removed", 3, None), ("changed", 4, 2), ("added", None, 3)]
    assert changes == expected
    edited = messages_diff(old, new)[3].diff
    assert str(edited.new) == 'Label<ins class="diff-ins"> this ticket</ins>: {{ticket}}'
    assert (edited.inserted_words, edited.deleted_words) == (2, 0)


def test_the_diff_api_goes_message_by_message(api, workspace, owner):
    prompt = prompts.prompt_create(workspace=workspace, user=owner, name="Labeller", messages=FEW_SHOT)
    changed = [FEW_SHOT[0], FEW_SHOT[1], {"role": "assistant", "content": "delivery"}, FEW_SHOT[3]]
    prompts.prompt_version_create(prompt=prompt, user=owner, messages=changed)
    response = api.get(f"/api/v1/prompts/{prompt.pk}/diff/?a=1&b=2")
    assert response.status_code == 200
    body = response.json()["messages"]
    assert [m["op"] for m in body] == ["equal", "equal", "changed", "equal"]
    assert body[2]["old_role"] == body[2]["new_role"] == "assistant"
    assert body[2]["diff"]["inline_html"] == '<del class="diff-del">shipping</del><ins class="diff-ins">delivery</ins>'


def test_the_editor_diff_compares_a_variant_s_messages_with_its_version(api, workspace, owner):
    prompt = prompts.prompt_create(workspace=workspace, user=owner, name="Labeller", messages=FEW_SHOT)
    body = {"messages": [*FEW_SHOT, {"role": "assistant", "content": "Label:"}]}
    response = api.post(f"/api/v1/prompt-versions/{prompt.current.pk}/diff/", body, format="json")
    assert response.status_code == 200, response.json()
    assert [m["op"] for m in response.json()["messages"]][-1] == "added"
    bad = api.post(f"/api/v1/prompt-versions/{prompt.current.pk}/diff/", {"messages": [{"role": "x"}]}, format="json")
    assert bad.status_code == 400 and bad.json()["messages"][0].startswith("message 1: unknown role")


def test_the_yaml_library_round_trips_messages_and_leaves_text_versions_as_before(workspace, owner):
    other_workspace = make_workspace(owner, "Other")
    prompt = prompts.prompt_create(workspace=workspace, user=owner, name="Labeller", text="Label {{ticket}}")
    prompts.prompt_version_create(prompt=prompt, user=owner, messages=FEW_SHOT, parent=prompt.current)
    text = library.library_export(workspace)
    assert text.count("messages:") == 1  # only the version of several messages carries them
    library.library_import(workspace=other_workspace, user=owner, text=text)
    assert library.library_export(other_workspace) == text
    copied = PromptVersion.objects.get(prompt__workspace=other_workspace, number=2)
    assert copied.messages == FEW_SHOT and copied.text == "Label: {{ticket}}"


def test_a_library_file_whose_text_is_not_its_last_user_message_is_refused(workspace, owner):
    text = (
        "prompt-library: 1\nprompts:\n- name: X\n  versions:\n  - number: 1\n    text: something else\n"
        "    messages: [{role: user, content: hello}]\n"
    )
    with pytest.raises(Exception, match="last user message"):
        library.library_import(workspace=workspace, user=owner, text=text)


def test_the_prompt_page_shows_messages_and_diffs_them(client, workspace, owner):
    prompt = prompts.prompt_create(workspace=workspace, user=owner, name="Labeller", text="Label: {{ticket}}")
    prompts.prompt_version_create(prompt=prompt, user=owner, messages=FEW_SHOT, parent=prompt.current)
    client.force_login(owner)
    page = client.get(f"/prompts/{prompt.pk}/?a=1&b=2").content.decode()
    assert 'data-role="version-messages"' in page and "You label support tickets." in page
    assert page.count('data-op="added"') == 3 and page.count('data-op="equal"') == 1
    assert "added as message 1" in page  # the system message
    # The new-version form edits the list as JSON, so saving keeps every message.
    assert 'name="messages"' in page


def test_the_page_saves_a_version_from_json_messages_and_says_what_is_wrong(client, workspace, owner):
    prompt = prompts.prompt_create(workspace=workspace, user=owner, name="Labeller", messages=FEW_SHOT)
    client.force_login(owner)
    client.post(f"/prompts/{prompt.pk}/versions/", {"messages": "[{not json"})
    client.post(f"/prompts/{prompt.pk}/versions/", {"messages": '[{"role": "user", "content": "v2 {{ticket}}"}]'})
    assert [v.messages for v in prompt.versions.all()] == [FEW_SHOT, [user("v2 {{ticket}}")]]
    page = client.get(f"/prompts/{prompt.pk}/").content.decode()
    assert "not valid JSON" in page


@pytest.mark.django_db(transaction=True)
def test_versions_made_before_messages_become_one_user_message(workspace, owner):
    executor = MigrationExecutor(connection)
    executor.migrate([("compare", "0015_conversation_root")])
    try:
        old_apps = executor.loader.project_state([("compare", "0015_conversation_root")]).apps
        Prompt = old_apps.get_model("compare", "Prompt")
        OldVersion = old_apps.get_model("compare", "PromptVersion")
        prompt = Prompt.objects.create(workspace_id=workspace.pk, name="Old")
        OldVersion.objects.create(prompt=prompt, number=1, text="Summarise {{t}}.", system_prompt="Be brief.")
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
    version = PromptVersion.objects.get(prompt__name="Old")
    assert version.messages == [user("Summarise {{t}}.")] and version.system_prompt == "Be brief."


def test_picking_a_version_fills_the_variant_s_messages_and_it_runs_that_version(api, workspace, owner):
    prompt = prompts.prompt_create(workspace=workspace, user=owner, name="Labeller", messages=FEW_SHOT)
    body = {
        "workspace": workspace.pk,
        "mode": "prompts",
        "shared_variables": {"ticket": "Lost card"},
        "variants": [
            {"label": "Library", "model": INSTANT, "prompt_version": prompt.current.pk},
            {"label": "Fresh", "model": INSTANT, "prompt": "Label {{ticket}}."},
        ],
    }
    response = api.post("/api/v1/groups/", body, format="json")
    assert response.status_code == 201, response.json()
    library_variant = response.json()["variants"][0]
    assert library_variant["messages"] == FEW_SHOT and library_variant["prompt"] == "Label: {{ticket}}"
    variant = Variant.objects.get(pk=library_variant["id"])
    assert runs_version(variant) and list(version_variants([prompt.current])) == [variant]
    # Saved back unchanged, the variant's messages make the same version again.
    saved = api.post(f"/api/v1/variants/{variant.pk}/save-version/", {"prompt": prompt.pk}, format="json")
    assert saved.status_code == 201 and saved.json()["messages"] == FEW_SHOT


def test_the_openapi_schema_describes_a_version_s_messages_and_the_message_diff(owner):
    client = APIClient()
    client.force_authenticate(owner)
    schemas = client.get("/api/schema/", {"format": "json"}).json()["components"]["schemas"]
    assert schemas["VersionOut"]["properties"]["messages"]["items"]["$ref"].endswith("/MessageOut")
    assert "messages" in schemas["VersionFieldsInRequest"]["properties"]
    diff = schemas["MessageDiffOut"]["properties"]
    assert {"op", "old_position", "new_position", "old_role", "new_role", "diff"} <= set(diff)
    assert schemas["VersionDiffOut"]["properties"]["messages"]["items"]["$ref"].endswith("/MessageDiffOut")
