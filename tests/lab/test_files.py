"""Workspace files: an image upload is sniffed from its bytes, bounded in size and pixels, stored once per workspace
under a random name, audited, and served only to the workspace's members."""

import hashlib

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from lab.audit.models import Action, AuditEntry
from lab.files.models import WorkspaceFile
from lab.models import Role
from tests.conftest import client_for
from tests.fixtures.factories import add_member, make_user, make_workspace
from tests.fixtures.images import bomb_png, image_bytes, stored_files

pytestmark = pytest.mark.django_db

MEDIA_TYPES = {"png": "image/png", "jpeg": "image/jpeg", "webp": "image/webp", "gif": "image/gif"}


def upload(client, workspace, data: bytes, name: str = "cat.png", content_type: str = "image/png"):
    return client.post(
        f"/api/v1/workspaces/{workspace.pk}/files/",
        {"file": SimpleUploadedFile(name, data, content_type=content_type)},
        format="multipart",
    )


@pytest.mark.parametrize("kind", ["png", "jpeg", "webp", "gif"])
def test_it_stores_each_image_type_with_its_facts(api, workspace, media_root, kind):
    data = image_bytes(kind, size=(12, 7))
    response = upload(api, workspace, data, name=f"picture.{kind}", content_type=MEDIA_TYPES[kind])
    assert response.status_code == 201, response.json()
    body = response.json()
    assert body["media_type"] == MEDIA_TYPES[kind]
    assert (body["size"], body["sha256"]) == (len(data), hashlib.sha256(data).hexdigest())
    assert (body["width"], body["height"]) == (12, 7)
    assert set(body) >= {"id", "media_type", "size", "sha256", "width", "height"}
    served = api.get(f"/api/v1/files/{body['id']}/")
    assert served.status_code == 200
    assert b"".join(served.streaming_content) == data
    assert served["Content-Type"] == MEDIA_TYPES[kind]
    assert served["X-Content-Type-Options"] == "nosniff"
    assert served["Content-Disposition"] == f'inline; filename="picture.{kind}"'


def test_the_storage_name_says_nothing_of_the_file_or_workspace(api, workspace, media_root):
    body = upload(api, workspace, image_bytes(), name="secret-plan.png").json()
    stored = WorkspaceFile.objects.get(pk=body["id"])
    directory, random_name = stored.storage_name.split("/")
    assert directory == "workspace-files" and "secret" not in random_name and len(random_name) >= 40
    assert [path.name for path in stored_files(media_root)] == [stored.storage_name.split("/")[-1]]


def test_the_same_bytes_in_a_workspace_are_the_same_file(api, workspace, media_root):
    data = image_bytes("png")
    first = upload(api, workspace, data, name="a.png")
    again = upload(api, workspace, data, name="b.png")
    assert (first.status_code, again.status_code) == (201, 200)
    assert first.json()["id"] == again.json()["id"]
    assert len(stored_files(media_root)) == 1


def test_an_upload_is_audited(api, owner, workspace, media_root):
    body = upload(api, workspace, image_bytes("png")).json()
    (entry,) = AuditEntry.objects.filter(workspace=workspace, action=Action.FILE_UPLOADED)
    assert entry.actor == owner and entry.target_id == str(body["id"]) and entry.details["sha256"] == body["sha256"]


def corrupted(png: bytes) -> bytes:
    """The PNG with one byte of its pixel data changed, so its chunk checksum no longer matches."""
    at = png.index(b"IDAT") + 6
    return png[:at] + bytes([png[at] ^ 0xFF]) + png[at + 1 :]


@pytest.mark.parametrize(
    ("data", "name", "content_type", "says"),
    [
        (image_bytes("jpeg"), "cat.png", "image/png", "sent as image/png but its bytes are a JPEG"),
        (image_bytes("png"), "cat.gif", "application/octet-stream", "named .gif but its bytes are a PNG"),
        (b"<svg xmlns='http://www.w3.org/2000/svg'><script>alert(1)</script></svg>", "x.png", "image/png", "not a"),
        (b"%PDF-1.4 not an image", "doc.pdf", "application/pdf", "not a PNG, JPEG, WebP or GIF"),
        (image_bytes("png")[:30], "cut.png", "image/png", "not a PNG"),
        (corrupted(image_bytes("png")), "bad.png", "image/png", "damaged"),
    ],
    ids=["jpeg-claiming-png", "png-named-gif", "svg", "pdf", "truncated", "bad-checksum"],
)
def test_bytes_that_are_not_the_image_they_claim_are_refused(
    api, workspace, media_root, data, name, content_type, says
):
    response = upload(api, workspace, data, name=name, content_type=content_type)
    assert response.status_code == 400
    assert says in response.json()["file"][0]
    assert stored_files(media_root) == [] and not WorkspaceFile.objects.exists()


def test_a_50_mb_upload_is_refused_before_it_is_read(api, workspace, media_root):
    response = upload(api, workspace, b"\0" * (50 * 1024 * 1024), name="huge.png")
    assert response.status_code == 413
    assert "FILES_MAX_BYTES" in response.json()["detail"]
    assert stored_files(media_root) == [] and not WorkspaceFile.objects.exists()


def test_a_file_over_the_limit_is_stopped_while_it_streams(api, workspace, media_root, settings):
    # Inside the body allowance (the limit plus room for the form) but past the file's own limit.
    settings.FILES_MAX_BYTES = 4096
    response = upload(api, workspace, image_bytes("png", size=(200, 200), colour=None) + b"\0" * 8192)
    assert response.status_code == 413
    assert "FILES_MAX_BYTES" in response.json()["file"][0]
    assert stored_files(media_root) == [] and not WorkspaceFile.objects.exists()


def test_a_decompression_bomb_png_is_refused_from_its_header(api, workspace, media_root):
    response = upload(api, workspace, bomb_png(), name="bomb.png")
    assert response.status_code == 400
    assert "FILES_MAX_PIXELS" in response.json()["file"][0]
    assert stored_files(media_root) == [] and not WorkspaceFile.objects.exists()


def test_the_pixel_limit_is_a_setting(api, workspace, media_root, settings):
    settings.FILES_MAX_PIXELS = 50
    response = upload(api, workspace, image_bytes("png", size=(10, 10)))
    assert response.status_code == 400 and "10×10" in response.json()["file"][0]


def test_a_missing_or_empty_file_field_is_named(api, workspace, media_root):
    assert "file" in api.post(f"/api/v1/workspaces/{workspace.pk}/files/", {}, format="multipart").json()
    assert "file" in upload(api, workspace, b"").json()


def test_another_workspaces_file_is_a_404_like_an_unknown_id(api, workspace, media_root):
    theirs_owner = make_user("theirs")
    theirs = make_workspace(theirs_owner, "Theirs")
    their_file = upload(client_for(theirs_owner), theirs, image_bytes("gif"), name="t.gif", content_type="image/gif")
    their_id = their_file.json()["id"]
    assert api.get(f"/api/v1/files/{their_id}/").status_code == 404
    assert api.get("/api/v1/files/999999/").status_code == 404
    assert api.get(f"/api/v1/files/{their_id}/").json() == api.get("/api/v1/files/999999/").json()
    assert upload(api, theirs, image_bytes("png")).status_code == 404


def test_viewers_read_files_but_only_editors_upload(workspace, api, media_root):
    viewer = add_member(workspace, "vera", Role.VIEWER)
    file_id = upload(api, workspace, image_bytes("png")).json()["id"]
    assert client_for(viewer).get(f"/api/v1/files/{file_id}/").status_code == 200
    assert upload(client_for(viewer), workspace, image_bytes("jpeg"), "b.jpg", "image/jpeg").status_code == 403


@pytest.mark.django_db(transaction=True)
def test_deleting_a_workspace_removes_its_files_bytes(api, workspace, media_root):
    upload(api, workspace, image_bytes("png"))
    assert len(stored_files(media_root)) == 1
    workspace.delete()
    assert stored_files(media_root) == [] and not WorkspaceFile.objects.exists()
