"""How a prompt variable names a workspace file: the value `{"$file": <id>}`. A `{{var}}` holding one becomes an
image part where it stands in a message (lab.templating); these are the one reading of that shape and of the parts.

Parts inside a rendered message's content (a list once it holds an image):
`{"type": "text", "text": ...}` and `{"type": "image", "file": <id>, "variable": <name>}`; before a call the worker
adds the bytes (`media_type`, `data`: base64) to each image part (lab.files.inline), and each adapter writes them in
its wire format.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

FILE_KEY = "$file"


def file_id_of(value: Any) -> int | None:
    """The file id a variable's value names, or None when it is not a file reference."""
    if isinstance(value, Mapping) and len(value) == 1 and FILE_KEY in value:
        file_id = value[FILE_KEY]
        if isinstance(file_id, int) and not isinstance(file_id, bool) and file_id > 0:
            return file_id
    return None


def looks_like_reference(value: Any) -> bool:
    """A value that means to name a file (it has the `$file` key) whether or not it does so correctly."""
    return isinstance(value, Mapping) and FILE_KEY in value


def image_parts(content: Any) -> list[dict]:
    """The image parts of a message's content (none when it is text)."""
    if not isinstance(content, list):
        return []
    return [part for part in content if isinstance(part, Mapping) and part.get("type") == "image"]


def has_images(messages) -> bool:
    return any(image_parts(message.get("content")) for message in messages)
