"""An uploaded image of a workspace: its facts (type, size, sha256, pixels) in the database, its bytes in storage."""

from django.conf import settings
from django.db import models
from django.db.models import Q


class MediaType(models.TextChoices):
    PNG = "image/png", "PNG"
    JPEG = "image/jpeg", "JPEG"
    WEBP = "image/webp", "WebP"
    GIF = "image/gif", "GIF"


class WorkspaceFile(models.Model):
    workspace = models.ForeignKey("lab.Workspace", on_delete=models.CASCADE, related_name="files")
    uploaded_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL)
    # The name the uploader gave, cleaned; shown to people and in Content-Disposition, never used as a path.
    name = models.CharField(max_length=200, blank=True)
    media_type = models.CharField(max_length=20, choices=MediaType.choices)
    size = models.PositiveBigIntegerField()
    sha256 = models.CharField(max_length=64)
    width = models.PositiveIntegerField()
    height = models.PositiveIntegerField()
    # The name in the storage backend: random, so nothing about it can be guessed from the file or workspace.
    storage_name = models.CharField(max_length=200, unique=True, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            # The same bytes uploaded again in a workspace are the same file.
            models.UniqueConstraint(fields=["workspace", "sha256"], name="file_one_per_content"),
            models.CheckConstraint(condition=Q(media_type__in=MediaType.values), name="file_media_type_valid"),
        ]

    def __str__(self) -> str:
        return self.name or f"file {self.pk}"
