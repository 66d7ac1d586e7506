"""Dataset zips: a CSV or JSONL of rows beside the images its cells name (`file:<path>`); each image passes the
upload checks and becomes a workspace file the row names (`{"$file": id}`); a zip bomb, a path outside the zip, a
missing or false image are refused naming the problem, and nothing is stored."""

import io
import json
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from compare.models import Dataset
from lab.files.models import WorkspaceFile
from tests.fixtures.images import image_bytes, stored_files

pytestmark = pytest.mark.django_db


def zipped(members: dict[str, bytes], compression=zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def import_zip(api, workspace, data: bytes, name: str = "rows.zip"):
    body = {"workspace": workspace.pk, "name": "Pets", "file": SimpleUploadedFile(name, data, "application/zip")}
    return api.post("/api/v1/datasets/import/", body, format="multipart")


def nothing_stored(media_root) -> bool:
    return not Dataset.objects.exists() and not WorkspaceFile.objects.exists() and stored_files(media_root) == []


def test_a_csv_row_naming_an_image_holds_the_stored_file(api, workspace, media_root):
    cat, dog = image_bytes("png"), image_bytes("jpeg", colour=(0, 90, 0))
    csv_text = "name,photo,question\ncat,file:images/cat.png,What is it?\ndog,file:dog.jpg,And this?\n"
    response = import_zip(
        api, workspace, zipped({"rows.csv": csv_text.encode(), "images/cat.png": cat, "dog.jpg": dog})
    )
    assert response.status_code == 201, response.json()
    rows = response.json()["rows"]
    files = {f.name: f for f in WorkspaceFile.objects.filter(workspace=workspace)}
    assert set(files) == {"cat.png", "dog.jpg"}
    by_type = {f.media_type: f.pk for f in files.values()}
    assert rows[0]["vars"]["photo"] == {"$file": by_type["image/png"]}
    assert rows[1]["vars"]["photo"] == {"$file": by_type["image/jpeg"]}
    assert rows[0]["vars"]["question"] == "What is it?"


def test_a_jsonl_zip_imports_and_its_preview_stores_nothing(api, workspace, media_root):
    lines = "\n".join(json.dumps({"name": f"r{i}", "vars": {"img": "file:a.gif", "n": i}}) for i in range(3))
    data = zipped({"data.jsonl": lines.encode(), "a.gif": image_bytes("gif")})
    preview = api.post("/api/v1/datasets/preview/", {"file": SimpleUploadedFile("d.zip", data)}, format="multipart")
    assert preview.status_code == 200 and preview.json()["row_count"] == 3
    assert nothing_stored(media_root)
    assert import_zip(api, workspace, data).status_code == 201
    assert WorkspaceFile.objects.count() == 1  # one image named by three rows is one file


def test_a_zip_bomb_is_refused_from_its_directory(api, workspace, media_root):
    bomb = zipped({"rows.csv": b"a,b\n1,file:big.png\n", "big.png": b"\0" * (30 * 1024 * 1024)})
    response = import_zip(api, workspace, bomb)
    assert response.status_code == 400
    assert "DATASET_ZIP_MAX_RATIO" in response.json()["file"][0]
    assert nothing_stored(media_root)


def test_a_zip_unpacking_past_the_total_limit_or_with_too_many_files_is_refused(api, workspace, media_root, settings):
    settings.DATASET_ZIP_MAX_UNCOMPRESSED = 1000
    response = import_zip(api, workspace, zipped({"rows.csv": b"a\n" + b"x\n" * 600}))
    assert "DATASET_ZIP_MAX_UNCOMPRESSED" in response.json()["file"][0]
    settings.DATASET_ZIP_MAX_MEMBERS = 2
    response = import_zip(api, workspace, zipped({"rows.csv": b"a\n1\n", "x.png": b"", "y.png": b""}))
    assert "DATASET_ZIP_MAX_MEMBERS" in response.json()["file"][0]
    assert nothing_stored(media_root)


@pytest.mark.parametrize("member", ["../evil.png", "/etc/evil.png", "a/../../evil.png"])
def test_a_member_naming_a_path_outside_the_zip_is_refused(api, workspace, media_root, member):
    response = import_zip(api, workspace, zipped({"rows.csv": b"a\nfile:x.png\n", member: image_bytes("png")}))
    assert response.status_code == 400 and "outside the zip" in response.json()["file"][0]
    assert nothing_stored(media_root)


def test_each_bad_image_is_named_by_row_and_variable_and_nothing_is_stored(api, workspace, media_root):
    csv_text = "photo\nfile:good.png\nfile:fake.png\nfile:missing.png\n"
    data = zipped({"rows.csv": csv_text.encode(), "good.png": image_bytes("png"), "fake.png": image_bytes("jpeg")})
    response = import_zip(api, workspace, data)
    assert response.status_code == 400
    assert response.json()["file"] == [
        "Row 2, photo: fake.png: The file is named .png but its bytes are a JPEG image.",
        "Row 3, photo: names 'file:missing.png', which is not in the zip.",
    ]
    assert nothing_stored(media_root)


def test_a_zip_needs_exactly_one_rows_file(api, workspace, media_root):
    response = import_zip(api, workspace, zipped({"a.csv": b"x\n1\n", "b.jsonl": b"{}\n"}))
    assert response.status_code == 400 and "exactly one" in response.json()["file"][0]
    assert import_zip(api, workspace, b"not a zip at all").status_code == 400


def test_the_dataset_page_shows_each_rows_image_small_from_the_members_only_address(
    api, client, owner, workspace, media_root
):
    data = zipped({"rows.csv": b"photo,q\nfile:cat.png,What?\n", "cat.png": image_bytes("png")})
    dataset_id = import_zip(api, workspace, data).json()["id"]
    file_id = WorkspaceFile.objects.get().pk
    client.force_login(owner)
    page = client.get(f"/datasets/{dataset_id}/").content.decode()
    assert f'<img src="/api/v1/files/{file_id}/" alt="Image photo" loading="lazy">' in page


def test_a_zip_uploaded_on_the_datasets_page_is_imported_with_its_images(client, owner, workspace, media_root):
    client.force_login(owner)
    data = zipped({"rows.csv": b"photo\nfile:cat.webp\n", "cat.webp": image_bytes("webp")})
    response = client.post(
        f"/w/{workspace.pk}/datasets/preview/", {"name": "Cats", "file": SimpleUploadedFile("cats.zip", data)}
    )
    dataset = Dataset.objects.get(name="Cats")
    assert response.status_code == 302 and response["Location"] == f"/datasets/{dataset.pk}/"
    assert dataset.rows.get().vars == {"photo": {"$file": WorkspaceFile.objects.get(media_type="image/webp").pk}}
