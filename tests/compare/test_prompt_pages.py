"""The library's pages and the remaining endpoints without a browser: pages render hostile text escaped, writes
need the editor role, another workspace's objects are 404, and the word diff keeps both texts exactly."""

import pytest

from compare.models import Output
from compare.prompts import services as prompts
from compare.prompts.diff import DELETE, EQUAL, INSERT, side_by_side, word_diff
from compare.prompts.models import Prompt
from compare.services import group_create
from tests.fixtures.compare_factories import INSTANT
from tests.fixtures.voting_factories import finished_round

pytestmark = pytest.mark.django_db

HOSTILE = '<script>alert(1)</script><img src=x onerror="alert(2)">'


@pytest.fixture
def prompt(workspace, owner) -> Prompt:
    prompt = prompts.prompt_create(workspace=workspace, user=owner, name="Greeter", text="Say hello to {{name}}.")
    prompts.prompt_version_create(prompt=prompt, user=owner, text=f"Say hello to {{{{name}}}}. {HOSTILE}")
    return prompt


@pytest.fixture
def round_(workspace, owner, prompt):
    group = group_create(
        workspace=workspace,
        user=owner,
        mode="prompts",
        shared_variables={"name": "Ada"},
        variants=[
            {"label": "One", "model": INSTANT, "prompt": "", "prompt_version": prompt.current.pk},
            {"label": "Two", "model": INSTANT, "prompt": "Greet {{name}}."},
        ],
    )
    round_ = finished_round(group, owner)
    one, two = round_.outputs.order_by("variant__position")
    Output.objects.filter(pk=two.pk).update(text=f"Hello Ada! {HOSTILE}")
    return round_


@pytest.mark.parametrize(
    "old, new",
    [
        ("one line", "two lines"),
        ("", "new"),
        ("gone", ""),
        ("a  b\n\tc", "a b\nc d"),
        ("same", "same"),
        ("Ünï <b>x</b>", "Ünï <i>x</i>!"),
    ],
)
def test_the_word_diff_keeps_both_texts_exactly(old, new):
    pieces = word_diff(old, new)
    assert "".join(p.text for p in pieces if p.op in (EQUAL, DELETE)) == old
    assert "".join(p.text for p in pieces if p.op in (EQUAL, INSERT)) == new
    assert side_by_side(old, new).changed == (old != new)


def test_the_prompt_page_shows_versions_and_an_escaped_diff(client, owner, prompt):
    client.force_login(owner)
    page = client.get(f"/prompts/{prompt.pk}/?a=1&b=2").content.decode()
    assert "Diff: v1 → v2" in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<script>alert(1)" not in page
    assert '<ins class="diff-ins">' in page
    assert f'data-src="/votes/prompts/{prompt.pk}/standing/"' in page
    standing = client.get(f"/votes/prompts/{prompt.pk}/standing/").content.decode()
    assert '<tr data-version="1">' in standing and "no decisive votes yet" in standing


def test_the_answer_diff_partial_escapes_both_answers(client, owner, round_):
    client.force_login(owner)
    one, two = round_.outputs.order_by("variant__position")
    partial = client.get(f"/compare/{round_.group_id}/rounds/1/diff/", {"a": one.pk, "b": two.pk}).content.decode()
    assert "&lt;img src=x onerror=&quot;alert(2)&quot;&gt;" in partial and "<img" not in partial
    assert client.get(f"/compare/{round_.group_id}/rounds/1/diff/", {"a": one.pk, "b": 0}).status_code == 404


def test_pages_add_promote_import_and_save_a_variant(client, owner, workspace, prompt, round_):
    client.force_login(owner)
    client.post(f"/prompts/{prompt.pk}/versions/", {"text": "Say hi to {{name}}.", "parent": "1", "message": "short"})
    third = prompt.versions.get(number=3)
    assert third.parent.number == 1 and third.message == "short"
    client.post(f"/prompt-versions/{third.pk}/promote/")
    prompt.refresh_from_db()
    assert prompt.current == third
    variant = round_.group.variants.get(position=2)
    client.post(f"/compare/{round_.group_id}/save-to-library/", {"variant": variant.pk, "name": "Greet"})
    variant.refresh_from_db()
    assert variant.prompt_version.prompt.name == "Greet"
    exported = client.get(f"/w/{workspace.pk}/prompts/export/").content.decode()
    assert exported.startswith("prompt-library: 1\n") and "name: Greet" in exported
    Prompt.objects.all().delete()
    client.post(f"/w/{workspace.pk}/prompts/import/", {"yaml": exported})
    assert sorted(Prompt.objects.values_list("name", flat=True)) == ["Greet", "Greeter"]
    listed = client.get(f"/w/{workspace.pk}/prompts/").content.decode()
    assert "Greeter" in listed and "Import a library file" in listed


def test_viewers_cannot_write_and_strangers_see_nothing(client, viewer, stranger, prompt, round_):
    client.force_login(viewer)
    assert client.get(f"/prompts/{prompt.pk}/").status_code == 200
    assert client.post(f"/prompts/{prompt.pk}/versions/", {"text": "x"}).status_code == 403
    assert client.post(f"/prompt-versions/{prompt.current.pk}/promote/").status_code == 403
    client.force_login(stranger)
    for url in [
        f"/prompts/{prompt.pk}/",
        f"/votes/prompts/{prompt.pk}/standing/",
        f"/w/{prompt.workspace_id}/prompts/",
        f"/w/{prompt.workspace_id}/prompts/export/",
        f"/compare/{round_.group_id}/rounds/1/diff/?a=1&b=2",
        f"/api/v1/prompts/{prompt.pk}/standing/",
        f"/api/v1/experiments/{round_.group_id}/baseline/",
    ]:
        assert client.get(url).status_code == 404, url
    for url in [f"/prompts/{prompt.pk}/versions/", f"/prompt-versions/{prompt.current.pk}/promote/"]:
        assert client.post(url, {"text": "x"}).status_code == 404, url


def test_the_editor_offers_the_library_and_the_version_diff_api_compares_a_text(api, client, owner, workspace, prompt):
    client.force_login(owner)
    editor = client.get(f"/w/{workspace.pk}/compare/new/").content.decode()
    assert "Greeter v2 (current)" not in editor and "Greeter v1 (current)" in editor
    response = api.post(
        f"/api/v1/prompt-versions/{prompt.current.pk}/diff/", {"text": "Say hi to {{name}}."}, format="json"
    )
    assert response.status_code == 200
    assert response.json()["inline_html"] == (
        'Say <del class="diff-del">hello</del><ins class="diff-ins">hi</ins> to {{name}}.'
    )


def test_the_standing_api_reports_every_version(api, prompt):
    body = api.get(f"/api/v1/prompts/{prompt.pk}/standing/").json()
    assert [(v["number"], v["comparisons"], v["win_rate"]) for v in body] == [(1, 0, None), (2, 0, None)]


def test_a_version_whose_text_the_database_cannot_store_is_refused_with_a_message(client, owner, prompt):
    client.force_login(owner)
    before = prompt.versions.count()
    response = client.post(f"/prompts/{prompt.pk}/versions/", {"text": "Say a\x00b", "message": "nul"}, follow=True)
    assert response.status_code == 200
    assert "text may not contain the NUL character" in response.content.decode()
    assert prompt.versions.count() == before


def test_new_prompt_on_the_library_page_creates_a_prompt_with_its_first_version(client, owner, workspace):
    client.force_login(owner)
    listed = client.get(f"/w/{workspace.pk}/prompts/").content.decode()
    assert 'href="#new-prompt"' in listed and f'action="/w/{workspace.pk}/prompts/new/"' in listed
    response = client.post(
        f"/w/{workspace.pk}/prompts/new/",
        {"name": " Apology ", "text": "Apologise for {{issue}}.", "system_prompt": "Be brief.", "message": "v1"},
    )
    created = Prompt.objects.get(workspace=workspace, name="Apology")
    assert response.status_code == 302 and response.url == f"/prompts/{created.pk}/"
    version = created.current
    assert (version.number, version.text, version.system_prompt, version.message) == (
        1,
        "Apologise for {{issue}}.",
        "Be brief.",
        "v1",
    )
    assert version.author == owner


@pytest.mark.parametrize(
    "body, shown",
    [
        ({"name": "", "text": "Hi"}, "Name: This field is required."),
        ({"name": "Greeter", "text": ""}, "Text: This field is required."),
        ({"name": "Greeter", "text": "Hi"}, "Name: This workspace already has a prompt named &quot;Greeter&quot;."),
        ({"name": "Nul", "text": "a\x00b"}, "Text: Null characters are not allowed."),
    ],
)
def test_a_refused_new_prompt_names_the_field_and_keeps_what_was_typed(client, owner, workspace, prompt, body, shown):
    client.force_login(owner)
    response = client.post(f"/w/{workspace.pk}/prompts/new/", body)
    page = response.content.decode()
    assert response.status_code == 400 and shown in page
    assert Prompt.objects.filter(workspace=workspace).count() == 1  # only the fixture's
    if body["text"] == "Hi":
        assert ">\nHi</textarea>" in page


def test_viewers_cannot_create_a_prompt_and_strangers_get_404(client, viewer, stranger, workspace):
    client.force_login(viewer)
    assert 'href="#new-prompt"' not in client.get(f"/w/{workspace.pk}/prompts/").content.decode()
    assert client.post(f"/w/{workspace.pk}/prompts/new/", {"name": "X", "text": "Y"}).status_code == 403
    client.force_login(stranger)
    assert client.post(f"/w/{workspace.pk}/prompts/new/", {"name": "X", "text": "Y"}).status_code == 404
    assert not Prompt.objects.exists()
