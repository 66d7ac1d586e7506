"""Thumbnails of workspace files on pages: the images a row's variables or a conversation's messages name, shown
small and fetched from the members-only file address (never a public URL)."""

from __future__ import annotations

from typing import Any

from django import template
from django.urls import reverse

from lab.files.references import file_id_of, image_parts

register = template.Library()


@register.inclusion_tag("lab/_file_thumbs.html")
def file_thumbs(source: Any) -> dict:
    """`source` is a variables mapping ({name: {"$file": id}}) or a list of messages with image parts."""
    found: list[tuple[str, int]] = []
    if isinstance(source, dict):
        found = [(name, file_id) for name, value in source.items() if (file_id := file_id_of(value)) is not None]
    elif isinstance(source, list):
        found = [
            (part.get("variable", ""), part["file"])
            for message in source
            if isinstance(message, dict)
            for part in image_parts(message.get("content"))
        ]
    return {"thumbs": [{"name": name, "url": reverse("api-file", args=[file_id])} for name, file_id in found]}
