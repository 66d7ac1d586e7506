"""Workspace files through the real web process (daphne): an image goes up and comes back to a member with its
headers; a 50 MB upload is a JSON 413 naming the limit and leaves nothing in the storage or the database."""

import httpx
import pytest

from lab.files.models import WorkspaceFile
from lab.tokens.services import api_token_create
from tests.fixtures.images import image_bytes, stored_files
from tests.fixtures.processes import start_web


@pytest.fixture
def web_with_media(transactional_db, tmp_path):
    media = tmp_path / "media"
    (tmp_path / "log").mkdir()
    web = start_web(tmp_path / "log", name="web-files", MEDIA_ROOT=str(media))
    yield web, media
    web.stop()


def test_an_upload_goes_up_and_comes_back_and_a_50_mb_one_is_refused_storing_nothing(web_with_media, owner, workspace):
    web, media = web_with_media
    _, key = api_token_create(user=owner, name="files")
    with httpx.Client(base_url=web.url, headers={"Authorization": f"Token {key}"}, timeout=60) as client:
        data = image_bytes("webp", size=(9, 5))
        created = client.post(
            f"/api/v1/workspaces/{workspace.pk}/files/", files={"file": ("a.webp", data, "image/webp")}
        )
        assert created.status_code == 201, created.text
        served = client.get(f"/api/v1/files/{created.json()['id']}/")
        assert served.content == data and served.headers["content-type"] == "image/webp"
        assert served.headers["x-content-type-options"] == "nosniff"

        huge = client.post(
            f"/api/v1/workspaces/{workspace.pk}/files/",
            files={"file": ("huge.png", b"\x89PNG" + b"\0" * (50 * 1024 * 1024), "image/png")},
        )
    assert huge.status_code == 413
    assert "FILES_MAX_BYTES" in huge.json()["detail"]
    assert WorkspaceFile.objects.count() == 1 and len(stored_files(media)) == 1
