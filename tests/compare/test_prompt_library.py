"""The prompt library: versions numbered per prompt, lineage recorded when a variant is picked from a version,
cloned, duplicated or saved as a new version, promote, the API's 400s and 404s, and the OpenAPI schema."""

import pytest
from rest_framework.test import APIClient

from compare import services
from compare.models import CompareGroup, Variant
from compare.prompts import services as prompts
from compare.prompts.models import Prompt
from compare.prompts.selectors import runs_version, version_variants
from tests.fixtures.compare_factories import INSTANT

pytestmark = pytest.mark.django_db


@pytest.fixture
def summarise(workspace, owner) -> Prompt:
    return prompts.prompt_create(
        workspace=workspace, user=owner, name="Summarise", text="Summarise {{topic}} in one line.", message="first"
    )


def picked_group(api, workspace, version, **variant):
    body = {
        "workspace": workspace.pk,
        "mode": "prompts",
        "shared_variables": {"topic": "tea"},
        "variants": [
            {"label": "Library", "model": INSTANT, "prompt": "", "prompt_version": version.pk, **variant},
            {"label": "Fresh", "model": INSTANT, "prompt": "Tell me about {{topic}}."},
        ],
    }
    response = api.post("/api/v1/groups/", body, format="json")
    assert response.status_code == 201, response.json()
    return CompareGroup.objects.get(pk=response.json()["id"])


def test_versions_are_numbered_per_prompt_and_the_first_is_current(summarise, owner):
    second = prompts.prompt_version_create(
        prompt=summarise, user=owner, text="Summarise {{topic}} in two lines.", parent=summarise.current
    )
    assert [v.number for v in summarise.versions.all()] == [1, 2]
    assert summarise.current.number == 1 and second.parent == summarise.current
    assert (second.author, second.author_name) == (owner, "owner")
    prompts.prompt_promote(version=second)
    summarise.refresh_from_db()
    assert summarise.current == second


def test_a_variant_picked_from_a_version_runs_its_text_and_records_it(api, workspace, summarise):
    group = picked_group(api, workspace, summarise.current)
    library, fresh = group.variants.order_by("position")
    assert library.prompt == "Summarise {{topic}} in one line."
    assert library.prompt_version == summarise.current and runs_version(library)
    assert fresh.prompt_version is None
    assert list(version_variants([summarise.current])) == [library]


def test_clone_and_duplicate_keep_the_version_they_came_from(api, workspace, owner, summarise):
    group = picked_group(api, workspace, summarise.current)
    clone = services.group_clone(group=group, user=owner, copy_variant=1)
    original, fresh, duplicate = clone.variants.order_by("position")
    assert original.prompt_version == summarise.current and duplicate.prompt_version == summarise.current
    assert duplicate.label == "Library v2" and fresh.prompt_version is None
    edited = services.group_clone(
        group=group,
        user=owner,
        variants=[
            {"label": "Edited", "model": INSTANT, "prompt": "Summarise {{topic}} briefly.", "prompt_version": None},
            *[{**v, "prompt_version": summarise.current.pk} for v in [{"label": "X", "model": INSTANT, "prompt": "x"}]],
        ],
    )
    assert [v.prompt_version for v in edited.variants.order_by("position")] == [None, summarise.current]
    # Made from the version but edited: its origin is kept, yet it did not run the version.
    [changed] = [v for v in edited.variants.all() if v.prompt == "x"]
    assert not runs_version(changed) and changed not in version_variants([summarise.current])


def test_saving_a_variant_as_a_version_records_its_parent_and_relinks_it(api, workspace, owner, summarise):
    group = picked_group(api, workspace, summarise.current)
    clone = services.group_clone(group=group, user=owner, copy_variant=1)
    duplicate = clone.variants.get(position=3)
    edited = "Summarise {{topic}} in one friendly line."
    Variant.objects.filter(pk=duplicate.pk).update(prompt=edited, messages=[{"role": "user", "content": edited}])

    response = api.post(
        f"/api/v1/variants/{duplicate.pk}/save-version/",
        {"prompt": summarise.pk, "message": "friendlier"},
        format="json",
    )

    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["number"] == 2 and body["message"] == "friendlier" and body["author"] == "owner"
    assert body["parent"] == {
        "id": summarise.current.pk,
        "prompt": summarise.pk,
        "prompt_name": "Summarise",
        "number": 1,
    }
    duplicate.refresh_from_db()
    assert duplicate.prompt_version_id == body["id"] and runs_version(duplicate)

    fresh = clone.variants.get(position=2)
    response = api.post(f"/api/v1/variants/{fresh.pk}/save-version/", {"name": "Tell me"}, format="json")
    assert response.status_code == 201 and response.json()["parent"] is None
    assert Prompt.objects.get(name="Tell me").current.text == "Tell me about {{topic}}."


def test_the_api_lists_reads_adds_versions_promotes_and_diffs(api, workspace, summarise):
    created = api.post(
        f"/api/v1/prompts/{summarise.pk}/versions/",
        {"text": "Summarise {{topic}} in <b>two</b> lines.", "parent": summarise.current.pk, "message": "longer"},
        format="json",
    )
    assert created.status_code == 201, created.json()
    promoted = api.post(f"/api/v1/prompt-versions/{created.json()['id']}/promote/")
    assert promoted.status_code == 200 and promoted.json()["current"] == 2
    listed = api.get(f"/api/v1/workspaces/{workspace.pk}/prompts/").json()
    assert [(p["name"], p["current"]) for p in listed] == [("Summarise", 2)]
    detail = api.get(f"/api/v1/prompts/{summarise.pk}/").json()
    assert [v["number"] for v in detail["versions"]] == [1, 2]
    assert detail["versions"][1]["parent"]["number"] == 1

    diff = api.get(f"/api/v1/prompts/{summarise.pk}/diff/", {"a": 1, "b": 2}).json()
    assert diff["text"]["old_html"] == 'Summarise {{topic}} in <del class="diff-del">one line</del>.'
    assert diff["text"]["new_html"] == (
        'Summarise {{topic}} in <ins class="diff-ins">&lt;b&gt;two&lt;/b&gt; lines</ins>.'
    )
    assert diff["text"]["changed"] and not diff["system_prompt"]["changed"]


def test_bad_input_is_a_400_naming_the_field(api, workspace, summarise):
    def errors(response):
        assert response.status_code == 400, response.content
        return response.json()

    assert "name" in errors(api.post(f"/api/v1/workspaces/{workspace.pk}/prompts/", {"text": "x"}, format="json"))
    assert "name" in errors(
        api.post(f"/api/v1/workspaces/{workspace.pk}/prompts/", {"name": "Summarise", "text": "x"}, format="json")
    )
    assert "text" in errors(api.post(f"/api/v1/prompts/{summarise.pk}/versions/", {"text": "  "}, format="json"))
    assert "parent" in errors(
        api.post(f"/api/v1/prompts/{summarise.pk}/versions/", {"text": "x", "parent": 999999}, format="json")
    )
    assert "b" in errors(api.get(f"/api/v1/prompts/{summarise.pk}/diff/", {"a": 1, "b": 7}))
    assert "a" in errors(api.get(f"/api/v1/prompts/{summarise.pk}/diff/", {"a": "x", "b": 1}))
    bad_pick = api.post(
        "/api/v1/groups/",
        {
            "workspace": workspace.pk,
            "mode": "prompts",
            "variants": [
                {"model": INSTANT, "prompt": "", "prompt_version": 999999},
                {"model": INSTANT, "prompt": "b"},
            ],
        },
        format="json",
    )
    assert "Variant 1: prompt_version: no such prompt version in this workspace." in errors(bad_pick)["variants"]


def test_a_library_file_whose_escapes_spell_text_the_database_cannot_store_is_a_400_naming_it(api, workspace):
    # YAML's double-quoted escapes make a NUL or a lone surrogate out of plain ASCII, past the JSON body's checks.
    # libyaml (lab.safe_yaml's parser) refuses the surrogate itself, at its line; the NUL is refused by its path.
    for escape, named in [("\\0", "prompts[1].versions[1].text"), ("\\ud800", "line 6, column 19")]:
        versions = f'    versions:\n      - number: 1\n        text: "a{escape}b"\n'
        text = f"prompt-library: 1\nprompts:\n  - name: Hostile\n{versions}"
        response = api.post(f"/api/v1/workspaces/{workspace.pk}/prompt-library/", {"yaml": text}, format="json")
        assert response.status_code == 400, response.content
        assert named in response.json()["yaml"][0]
    assert not Prompt.objects.filter(name="Hostile").exists()


def test_a_library_file_with_a_name_or_author_too_long_to_store_is_a_400_naming_it(api, workspace):
    def library(name: str, author: str) -> str:
        version = f"      - number: 1\n        text: hello\n        author: {author}\n"
        return f"prompt-library: 1\nprompts:\n  - name: {name}\n    versions:\n{version}"

    url = f"/api/v1/workspaces/{workspace.pk}/prompt-library/"
    for text, message in [
        (library("n" * 201, "ann"), "prompts[1]: name: A prompt's name has at most 200 characters."),
        (library("Fine", "a" * 151), "prompts[1] (Fine) v1: `author` has at most 150 characters."),
    ]:
        response = api.post(url, {"yaml": text}, format="json")
        assert response.status_code == 400, response.content
        assert response.json()["yaml"] == [message]
    assert not Prompt.objects.exists()


def test_another_workspaces_prompts_are_404(api_for, stranger, workspace, owner, summarise, api):
    group = picked_group(api, workspace, summarise.current)
    client = api_for(stranger)
    variant = group.variants.first()
    for method, url in [
        ("get", f"/api/v1/prompts/{summarise.pk}/"),
        ("get", f"/api/v1/prompts/{summarise.pk}/diff/?a=1&b=1"),
        ("post", f"/api/v1/prompts/{summarise.pk}/versions/"),
        ("post", f"/api/v1/prompt-versions/{summarise.current.pk}/promote/"),
        ("post", f"/api/v1/variants/{variant.pk}/save-version/"),
        ("get", f"/api/v1/workspaces/{workspace.pk}/prompts/"),
        ("get", f"/api/v1/workspaces/{workspace.pk}/prompt-library/"),
    ]:
        assert getattr(client, method)(url, {"text": "x"}, format="json").status_code == 404, url
    # Naming their version when picking is a 400 on the field, like any foreign id in a body.
    own = client.get("/api/v1/workspaces/").json()
    mine = (own["results"] if isinstance(own, dict) else own)[0]["id"]
    response = client.post(
        "/api/v1/groups/",
        {
            "workspace": mine,
            "mode": "prompts",
            "variants": [
                {"model": INSTANT, "prompt": "", "prompt_version": summarise.current.pk},
                {"model": INSTANT, "prompt": "b"},
            ],
        },
        format="json",
    )
    assert response.status_code == 400 and "prompt_version" in str(response.json()["variants"])


def test_the_openapi_schema_lists_the_library_endpoints(owner):
    client = APIClient()
    client.force_authenticate(owner)
    paths = client.get("/api/schema/", {"format": "json"}).json()["paths"]
    for path in [
        "/api/v1/workspaces/{id}/prompts/",
        "/api/v1/workspaces/{id}/prompt-library/",
        "/api/v1/prompts/{id}/",
        "/api/v1/prompts/{id}/versions/",
        "/api/v1/prompts/{id}/diff/",
        "/api/v1/prompt-versions/{id}/promote/",
        "/api/v1/variants/{id}/save-version/",
        "/api/v1/prompt-versions/{id}/diff/",
        "/api/v1/prompts/{id}/standing/",
        "/api/v1/experiments/{id}/baseline/",
        "/api/v1/experiments/{id}/pin/",
        "/api/v1/datasets/from-rounds/",
    ]:
        assert path in paths, path
