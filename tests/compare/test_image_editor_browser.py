"""In the editor, "Image…" beside a shared variable uploads a picture into it: the row then holds its reference and
shows the image small, loaded from the members-only file address."""

import pytest

from lab.files.models import WorkspaceFile
from tests.fixtures.browser import log_in, off_loop
from tests.fixtures.images import image_bytes
from tests.fixtures.processes import start_web

pytestmark = [pytest.mark.browser, pytest.mark.services]


@pytest.fixture
def web_with_media(transactional_db, tmp_path):
    (tmp_path / "log").mkdir()
    web = start_web(tmp_path / "log", name="web-editor-files", MEDIA_ROOT=str(tmp_path / "media"))
    yield web
    web.stop()


def test_an_image_uploaded_into_a_variable_shows_as_a_thumbnail(web_with_media, owner, workspace, page_factory):
    page = page_factory(1280, 900)
    log_in(page, web_with_media.url, owner.username)
    page.goto(f"{web_with_media.url}/w/{workspace.pk}/compare/new/")
    shared = page.locator("[data-role=shared-vars]")
    shared.locator("button.add-var").click()
    shared.locator("input[type=file]").first.set_input_files(
        files=[{"name": "cat.png", "mimeType": "image/png", "buffer": image_bytes("png", size=(40, 30))}]
    )
    thumb = shared.locator("img.var-thumb")
    thumb.wait_for()
    stored = off_loop(WorkspaceFile.objects.get, workspace=workspace)
    assert thumb.get_attribute("src") == f"/api/v1/files/{stored.pk}/"
    page.wait_for_function("document.querySelector('img.var-thumb').naturalWidth === 40")
    assert shared.locator("textarea.var-value").first.input_value() == f'{{"$file":{stored.pk}}}'
    assert shared.locator("input.var-name").first.input_value() == "image"
