"""Files API: upload an image to a workspace (editors), fetch its bytes (members). Thin: access, bounded parsing,
the service. The bytes are served here only, with their sniffed type and `nosniff`, never from a public URL."""

from django.conf import settings
from django.core.files.storage import default_storage
from django.http import FileResponse
from drf_spectacular.utils import OpenApiTypes, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from ..access import file_for_user, workspace_for_user
from ..files.models import WorkspaceFile
from ..files.services import file_create
from ..files.uploads import bounded_multipart_parser
from ..models import Role
from .inputs import StrictIn


class WorkspaceFileIn(StrictIn):
    file = serializers.FileField(allow_empty_file=False)


class WorkspaceFileOut(serializers.ModelSerializer):
    class Meta:
        model = WorkspaceFile
        fields = ["id", "media_type", "size", "sha256", "width", "height", "name", "created_at"]


class FileList(APIView):
    parser_classes = [bounded_multipart_parser(limit_of=lambda: settings.FILES_MAX_BYTES, setting="FILES_MAX_BYTES")]

    @extend_schema(
        operation_id="files_upload",
        request={"multipart/form-data": WorkspaceFileIn},
        responses={201: WorkspaceFileOut, 200: WorkspaceFileOut},
        description="A PNG, JPEG, WebP or GIF image; the same bytes again answer 200 with the file already stored.",
    )
    def post(self, request, pk):
        workspace = workspace_for_user(request.user, pk, Role.EDITOR)
        data = WorkspaceFileIn(data=request.data)
        data.is_valid(raise_exception=True)
        upload = data.validated_data["file"]
        stored, created = file_create(
            workspace=workspace,
            actor=request.user,
            stream=upload,
            name=upload.name or "",
            content_type=upload.content_type or "",
        )
        return Response(
            WorkspaceFileOut(stored).data, status=status.HTTP_201_CREATED if created else status.HTTP_200_OK
        )


class FileDetail(APIView):
    @extend_schema(operation_id="files_read", responses={(200, "image/*"): OpenApiTypes.BINARY})
    def get(self, request, file_id):
        stored = file_for_user(request.user, file_id)
        response = FileResponse(
            default_storage.open(stored.storage_name, "rb"),
            content_type=stored.media_type,
            as_attachment=False,
            filename=stored.name or f"file-{stored.pk}",
        )
        response["X-Content-Type-Options"] = "nosniff"
        # An image opened directly may not run anything, whatever its bytes turn out to hold.
        response["Content-Security-Policy"] = "default-src 'none'; sandbox"
        response["Cache-Control"] = "private, max-age=3600"
        return response
