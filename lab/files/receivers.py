"""A deleted file's bytes go with it: when a WorkspaceFile row is deleted (its workspace deleted, say), its stored
bytes are removed once the deletion commits, so nothing of a gone workspace stays in the storage."""

from functools import partial

from django.core.files.storage import default_storage
from django.db import transaction
from django.db.models.signals import post_delete
from django.dispatch import receiver

from .models import WorkspaceFile


@receiver(post_delete, sender=WorkspaceFile, dispatch_uid="lab.files.bytes_deleted")
def bytes_deleted(sender, instance: WorkspaceFile, **kwargs) -> None:
    transaction.on_commit(partial(default_storage.delete, instance.storage_name))
