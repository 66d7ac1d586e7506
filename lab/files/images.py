"""What an acceptable image is: PNG, JPEG, WebP or GIF as sniffed from its bytes by Pillow, agreeing with the type
and extension it claims, within the pixel limit. The one place these rules live; uploads and dataset zips ask it."""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import IO

from django.conf import settings
from PIL import Image, UnidentifiedImageError

from .models import MediaType

# Pillow's format name → the media type stored and sent to providers.
MEDIA_TYPE_OF_FORMAT = {"PNG": MediaType.PNG, "JPEG": MediaType.JPEG, "WEBP": MediaType.WEBP, "GIF": MediaType.GIF}
EXTENSIONS = {
    MediaType.PNG: {"png"},
    MediaType.JPEG: {"jpg", "jpeg", "jpe", "jfif"},
    MediaType.WEBP: {"webp"},
    MediaType.GIF: {"gif"},
}
# Content types a client may send that claim nothing (a browser or curl that did not know).
UNCLAIMED_TYPES = {"", "application/octet-stream", "binary/octet-stream"}
CONTENT_TYPE_ALIASES = {"image/jpg": MediaType.JPEG, "image/pjpeg": MediaType.JPEG, "image/x-png": MediaType.PNG}


class ImageRefused(ValueError):
    """The bytes are not an image this lab takes; the message says why, for the person who sent it."""


@dataclass(frozen=True)
class ImageFacts:
    media_type: str
    width: int
    height: int


def image_facts(stream: IO[bytes], *, name: str = "", content_type: str = "") -> ImageFacts:
    """Sniff and check an image; raises ImageRefused. Reads only the header and, for the checks of `verify`, the
    chunks; the pixels are never decoded, so a decompression bomb costs nothing."""
    max_pixels = settings.FILES_MAX_PIXELS
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            image = Image.open(stream)
            media_type = MEDIA_TYPE_OF_FORMAT.get(image.format or "")
            if media_type is None:
                raise ImageRefused(f"A {image.format} image is not taken; send PNG, JPEG, WebP or GIF.")
            width, height = image.size
            if width * height > max_pixels:
                raise ImageRefused(_too_many_pixels(width, height, max_pixels))
            image.verify()
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise ImageRefused(f"The image has more pixels than the limit of {max_pixels:,} (FILES_MAX_PIXELS).") from None
    except UnidentifiedImageError:
        raise ImageRefused("The bytes are not a PNG, JPEG, WebP or GIF image.") from None
    except ImageRefused:
        raise
    except Exception as exc:  # Pillow's plugins raise many kinds (SyntaxError, OSError, struct.error) for bad data.
        raise ImageRefused(f"The image is damaged: {exc}") from None
    _check_claims(media_type, name=name, content_type=content_type)
    return ImageFacts(media_type=str(media_type), width=width, height=height)


def _too_many_pixels(width: int, height: int, limit: int) -> str:
    return f"The image is {width}×{height} pixels; the limit is {limit:,} pixels (FILES_MAX_PIXELS)."


def _check_claims(media_type: MediaType, *, name: str, content_type: str) -> None:
    """The declared type and the extension, where given, must name what the bytes are."""
    label = MediaType(media_type).label
    claimed = content_type.split(";")[0].strip().lower()
    if claimed not in UNCLAIMED_TYPES and CONTENT_TYPE_ALIASES.get(claimed, claimed) != media_type:
        raise ImageRefused(f"The file is sent as {claimed} but its bytes are a {label} image.")
    extension = name.rsplit(".", 1)[1].lower() if "." in name else ""
    if extension and extension not in EXTENSIONS[media_type]:
        raise ImageRefused(f"The file is named .{extension} but its bytes are a {label} image.")
