"""Writes of workspace files: store an uploaded image once per workspace (same bytes, same file), audited."""

from __future__ import annotations

import hashlib
import re
import secrets
from typing import IO

from django.core.exceptions import ValidationError
from django.core.files.storage import default_storage
from django.db import IntegrityError, transaction

from ..audit.models import Action
from ..audit.services import audit_record
from ..models import Workspace
from .images import ImageRefused, image_facts
from .models import WorkspaceFile

CHUNK = 64 * 1024
# Storage names carry no workspace, user or original name: knowing one file's address tells nothing of another's.
STORAGE_DIRECTORY = "workspace-files"


def file_create(
    *, workspace: Workspace, actor, stream: IO[bytes], name: str = "", content_type: str = "", field: str = "file"
) -> tuple[WorkspaceFile, bool]:
    """Check and store an image; returns the file and whether it is new. An image refused is a ValidationError
    naming `field`, and nothing is stored. The caller has already bounded the stream's size."""
    try:
        facts = image_facts(stream, name=name, content_type=content_type)
    except ImageRefused as exc:
        raise ValidationError({field: [str(exc)]}) from None
    size, digest = _size_and_digest(stream)
    if existing := WorkspaceFile.objects.filter(workspace=workspace, sha256=digest).first():
        return existing, False
    stream.seek(0)
    storage_name = default_storage.save(f"{STORAGE_DIRECTORY}/{secrets.token_urlsafe(32)}", stream)
    try:
        with transaction.atomic():
            stored = WorkspaceFile.objects.create(
                workspace=workspace,
                uploaded_by=actor if getattr(actor, "pk", None) else None,
                name=clean_name(name),
                media_type=facts.media_type,
                size=size,
                sha256=digest,
                width=facts.width,
                height=facts.height,
                storage_name=storage_name,
            )
            audit_record(
                actor=actor,
                action=Action.FILE_UPLOADED,
                target=stored,
                details={"media_type": facts.media_type, "size": size, "sha256": digest},
            )
    except IntegrityError:
        # The same bytes arrived at the same moment from another request: theirs is the file.
        default_storage.delete(storage_name)
        return WorkspaceFile.objects.get(workspace=workspace, sha256=digest), False
    except BaseException:
        default_storage.delete(storage_name)
        raise
    return stored, True


def clean_name(name: str) -> str:
    """The last path part of a given name, with only characters safe in a header and a page."""
    base = re.split(r"[\\/]", name or "")[-1]
    return re.sub(r"[^A-Za-z0-9._ -]", "_", base).strip(" .")[:200]


def _size_and_digest(stream: IO[bytes]) -> tuple[int, str]:
    stream.seek(0)
    digest, size = hashlib.sha256(), 0
    while chunk := stream.read(CHUNK):
        digest.update(chunk)
        size += len(chunk)
    return size, digest.hexdigest()
