"""The bytes of the images in a conversation, added just before a call: each image part gets its file's media type
and base64 data, read through the storage API. Stored outputs keep the references only."""

from __future__ import annotations

import base64

from django.core.exceptions import ValidationError
from django.core.files.storage import default_storage

from .models import WorkspaceFile
from .references import image_parts


def with_image_data(messages: list[dict], *, workspace_id: int, cache: dict[int, dict] | None = None) -> list[dict]:
    """`messages` with every image part's bytes filled in (a copy; text-only messages are returned as they are).
    `cache` (file id → data) lets the variants of one round share one read. A file that is not the workspace's is
    a ValidationError naming the variable."""
    if not any(image_parts(message.get("content")) for message in messages):
        return messages
    cache = {} if cache is None else cache
    wanted = {part["file"] for m in messages for part in image_parts(m.get("content"))} - set(cache)
    for stored in WorkspaceFile.objects.filter(workspace_id=workspace_id, pk__in=wanted):
        with default_storage.open(stored.storage_name, "rb") as handle:
            cache[stored.pk] = {"media_type": stored.media_type, "data": base64.b64encode(handle.read()).decode()}
    return [{**message, "content": _filled(message["content"], cache)} for message in messages]


def _filled(content, cache: dict[int, dict]):
    if not isinstance(content, list):
        return content
    filled = []
    for part in content:
        if part.get("type") == "image":
            if part["file"] not in cache:
                name = part.get("variable", "")
                raise ValidationError(
                    f"{{{{{name}}}}} holds file {part['file']}, which is not a file of this workspace."
                )
            part = {**part, **cache[part["file"]]}
        filled.append(part)
    return filled
