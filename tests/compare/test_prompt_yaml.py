"""The library as YAML: export → import into another workspace → export gives the same text, byte for byte, with
multi-line, hostile, Unicode and whitespace-edged texts, lineage across prompts and the current version; a bad
file is a 400 naming the field and saves nothing."""

import pytest
import yaml

from compare.prompts import services as prompts
from compare.prompts.library import library_export, library_import
from compare.prompts.models import Prompt
from tests.fixtures.factories import make_workspace

pytestmark = pytest.mark.django_db

AWKWARD_TEXTS = [
    "Line one\nline two\n",
    "trailing spaces   \n  and leading\n\n\n",
    "no newline at the end\nsecond",
    '<script>alert("x")</script> {{name}} & "quotes" \'single\'',
    "Ünïcödé — 中文 🍵\ttab",
    "- looks: like yaml\n? key\n: value\n# not a comment",
    "\n starts with a newline",
    "yes",
    "123",
    "",  # as a system prompt
]


@pytest.fixture
def library(workspace, owner):
    first = prompts.prompt_create(
        workspace=workspace,
        user=owner,
        name="Greeter",
        text=AWKWARD_TEXTS[0],
        system_prompt=AWKWARD_TEXTS[1],
        variables={"name": "Ada", "nested": {"list": [1, 2.5, None, True]}},
        message="first try",
    )
    parent = first.current
    for text in AWKWARD_TEXTS[2:]:
        version = prompts.prompt_version_create(
            prompt=first,
            user=owner,
            text=text or "x",
            system_prompt=text,
            message=f"from v{parent.number}",
            parent=parent,
        )
        parent = version
    prompts.prompt_promote(version=first.versions.get(number=3))
    other = prompts.prompt_create(
        workspace=workspace, user=owner, name="Another: prompt", text="Built on the greeter.", parent=parent
    )
    return first, other


def test_export_import_export_is_the_identity(library, workspace, owner, stranger):
    exported = library_export(workspace)
    there = make_workspace(stranger, "Elsewhere")

    library_import(workspace=there, user=stranger, text=exported)

    assert library_export(there) == exported
    data = yaml.safe_load(exported)
    greeter = data["prompts"][1]
    assert data["prompts"][0]["name"] == "Another: prompt" and greeter["current"] == 3
    assert [v["text"] for v in greeter["versions"]][1:] == [t or "x" for t in AWKWARD_TEXTS[2:]]
    assert greeter["versions"][0]["variables"] == {"name": "Ada", "nested": {"list": [1, 2.5, None, True]}}
    assert data["prompts"][0]["versions"][0]["parent"] == {"prompt": "Greeter", "number": len(AWKWARD_TEXTS) - 1}
    copied = Prompt.objects.get(workspace=there, name="Another: prompt").versions.get()
    assert copied.parent.prompt.workspace == there  # lineage points inside the new workspace
    # An author who is not a member there is kept by name only.
    assert copied.author is None and copied.author_name == "owner"
    assert "Line one\n" in exported and "|" in exported  # multi-line text as readable literal blocks


def test_a_file_written_by_hand_round_trips_too(workspace, owner):
    text = (
        "prompt-library: 1\n"
        "prompts:\n"
        "- name: Hand written\n"
        "  current: 1\n"
        "  versions:\n"
        "  - number: 1\n"
        "    text: |\n"
        "      Two\n"
        "      lines\n"
        "    system_prompt: ''\n"
        "    variables: {}\n"
        "    author: owner\n"
        "    message: ''\n"
        "    parent: null\n"
    )
    [prompt] = library_import(workspace=workspace, user=owner, text=text)
    assert prompt.current.text == "Two\nlines\n" and prompt.current.author == owner
    assert library_export(workspace) == text


@pytest.mark.parametrize(
    "text, says",
    [
        ("not: [valid", "Not valid YAML"),
        ("prompts: []", "prompt-library: 1"),
        ("prompt-library: 1\nprompts:\n- name: A\n  versions: []\n", "at least one"),
        ("prompt-library: 1\nprompts:\n- name: A\n  versions:\n  - {number: 1, text: ''}\n", "`text`"),
        (
            "prompt-library: 1\nprompts:\n- name: A\n  versions:\n  - {number: 2, text: a}\n  - {number: 1, text: b}\n",
            "increasing",
        ),
        ("prompt-library: 1\nprompts:\n- name: A\n  current: 4\n  versions:\n  - {number: 1, text: a}\n", "`current`"),
        ("prompt-library: 1\nprompts:\n- name: A\n  versions:\n  - {number: 1, text: a, colour: red}\n", "only number"),
        (
            "prompt-library: 1\nprompts:\n- name: A\n  versions:\n"
            "  - {number: 1, text: a, parent: {prompt: B, number: 1}}\n",
            "not a version in this file",
        ),
    ],
)
def test_a_bad_file_is_a_400_on_the_yaml_field_and_saves_nothing(api, workspace, text, says):
    response = api.post(f"/api/v1/workspaces/{workspace.pk}/prompt-library/", {"yaml": text}, format="json")
    assert response.status_code == 400
    assert says in " ".join(response.json()["yaml"])
    assert not Prompt.objects.exists()


def test_the_api_exports_and_imports(api, library, workspace):
    exported = api.get(f"/api/v1/workspaces/{workspace.pk}/prompt-library/").json()["yaml"]
    clash = api.post(f"/api/v1/workspaces/{workspace.pk}/prompt-library/", {"yaml": exported}, format="json")
    assert clash.status_code == 400 and "already has prompts named" in clash.json()["yaml"][0]
    Prompt.objects.all().delete()
    imported = api.post(f"/api/v1/workspaces/{workspace.pk}/prompt-library/", {"yaml": exported}, format="json")
    assert imported.status_code == 201
    assert [p["name"] for p in imported.json()["prompts"]] == ["Another: prompt", "Greeter"]
    assert api.get(f"/api/v1/workspaces/{workspace.pk}/prompt-library/").json()["yaml"] == exported
