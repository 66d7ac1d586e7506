"""Dataset zips: a CSV, JSON, JSONL or YAML file of rows beside the images its cells name.

The convention: the zip holds exactly one data file (`*.csv`, `*.json`, `*.jsonl`/`*.ndjson`, `*.yaml`/`*.yml`) and
image files; a variable whose value is the text `file:<path in the zip>` (e.g. `file:images/cat.png`) becomes that
image, stored as a workspace file, and the row holds `{"$file": <id>}`. Every image passes the upload checks
(lab.files.images). The zip itself is bounded before anything is decompressed: member count, total uncompressed
size and each member's compression ratio (a zip bomb is refused from its directory), and no member may name a path
outside the zip (`..`, an absolute path). Nothing is stored unless every row and image is good.
"""

from __future__ import annotations

import io
import zipfile
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError

from lab.files.images import ImageRefused, image_facts

from .files import EXTENSIONS, PREVIEW_ROWS, Preview, decode, rows_parse

FILE_PREFIX = "file:"
MB = 1024 * 1024


@dataclass
class ZipRows:
    """A zip's rows (cells naming images still as `file:…`), and the bytes of each image a row names."""

    rows: list[dict[str, Any]]
    images: dict[str, bytes]


def zip_rows(content: bytes) -> ZipRows:
    """Read and check a dataset zip; raises ValidationError({"file": [problems]}) naming each problem."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(content))
        members = [info for info in archive.infolist() if not info.is_dir()]
    except (zipfile.BadZipFile, zipfile.LargeZipFile, ValueError) as exc:
        raise _invalid(f"The file is not a readable zip ({exc}).") from None
    _check_directory(members)
    data_files = [info for info in members if PurePosixPath(info.filename).suffix.lower() in EXTENSIONS]
    if len(data_files) != 1:
        found = ", ".join(info.filename for info in data_files) or "none"
        raise _invalid(f"A dataset zip holds exactly one CSV, JSON, JSONL or YAML file of rows; it has {found}.")
    data = data_files[0]
    rows = rows_parse(
        content=decode(_read(archive, data)), format=EXTENSIONS[PurePosixPath(data.filename).suffix.lower()]
    )
    by_name = {_normal(info.filename): info for info in members}
    images: dict[str, bytes] = {}
    problems: list[str] = []
    for index, row in enumerate(rows, start=1):
        for variable, value in row["vars"].items():
            if not (isinstance(value, str) and value.startswith(FILE_PREFIX)):
                continue
            path = _normal(value.removeprefix(FILE_PREFIX).strip())
            where = f"Row {index}, {variable}"
            if path not in by_name:
                problems.append(f"{where}: names {value!r}, which is not in the zip.")
                continue
            if path not in images:
                images[path] = _read(archive, by_name[path])
                try:
                    image_facts(io.BytesIO(images[path]), name=path)
                except ImageRefused as exc:
                    problems.append(f"{where}: {path}: {exc}")
    if problems:
        raise _invalid(*problems)
    return ZipRows(rows=rows, images=images)


def zip_preview(content: bytes) -> Preview:
    """What importing a zip would create, every check made and nothing stored (image cells as written)."""
    rows = zip_rows(content).rows
    variables = list(dict.fromkeys(name for row in rows for name in row["vars"]))
    return Preview(format="zip", row_count=len(rows), variables=variables, rows=rows[:PREVIEW_ROWS])


def with_file_references(variables: dict[str, Any], ids: dict[str, int]) -> dict[str, Any]:
    """A row's variables with each `file:<path>` replaced by the stored file's reference."""
    return {
        name: {"$file": ids[_normal(value.removeprefix(FILE_PREFIX).strip())]}
        if isinstance(value, str) and value.startswith(FILE_PREFIX)
        else value
        for name, value in variables.items()
    }


def _check_directory(members: list[zipfile.ZipInfo]) -> None:
    """The zip's limits, from its directory alone (nothing is decompressed yet)."""
    max_members, max_total = settings.DATASET_ZIP_MAX_MEMBERS, settings.DATASET_ZIP_MAX_UNCOMPRESSED
    max_ratio = settings.DATASET_ZIP_MAX_RATIO
    if len(members) > max_members:
        raise _invalid(f"The zip has {len(members):,} files; the limit is {max_members:,} (DATASET_ZIP_MAX_MEMBERS).")
    total = sum(info.file_size for info in members)
    if total > max_total:
        raise _invalid(
            f"The zip unpacks to {total / MB:,.1f} MB; the limit is {max_total / MB:g} MB "
            "(DATASET_ZIP_MAX_UNCOMPRESSED)."
        )
    for info in members:
        name = info.filename.replace("\\", "/")
        if name.startswith("/") or ".." in PurePosixPath(name).parts or ":" in PurePosixPath(name).parts[0]:
            raise _invalid(f"{info.filename!r} names a path outside the zip.")
        if info.file_size > max_ratio * max(info.compress_size, 1) and info.file_size > MB:
            raise _invalid(
                f"{info.filename} is compressed {info.file_size // max(info.compress_size, 1):,} to 1; the limit is "
                f"{max_ratio} to 1 (DATASET_ZIP_MAX_RATIO)."
            )


def _read(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> bytes:
    # zipfile stops at the size the directory declares (checked above) and checks the CRC at the end.
    try:
        with archive.open(info) as handle:
            return handle.read(info.file_size + 1)[: info.file_size]
    except (zipfile.BadZipFile, NotImplementedError, RuntimeError, OSError) as exc:
        raise _invalid(f"{info.filename}: not readable ({exc}).") from None


def _normal(name: str) -> str:
    return str(PurePosixPath(name.replace("\\", "/").lstrip("/")))


def _invalid(*problems: str) -> ValidationError:
    return ValidationError({"file": list(problems)})
