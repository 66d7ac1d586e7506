"""Dataset API beyond list, create and read: import a file (CSV, JSON, JSONL, YAML), preview one, rename, delete, and
add, change or delete rows. Thin: the rules are in compare.dataset_services and compare.dataset_files; another
workspace's dataset is a 404."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from lab.api.inputs import StrictIn
from lab.api.parsers import CheckedJSONParser

from .. import dataset_files, dataset_services
from ..access import dataset_for_user, dataset_row, workspace_from_body
from ..services import MAX_DATASET_ROWS
from . import serializers as s
from .views import DatasetDetail, _dataset_detail


class FileIn(StrictIn):
    """A file upload (multipart `file`) or its text (`content`); the format defaults to the file's extension."""

    file = serializers.FileField(required=False)
    content = serializers.CharField(required=False, trim_whitespace=False, max_length=dataset_files.MAX_IMPORT_BYTES)
    format = serializers.ChoiceField(choices=dataset_files.FORMATS, required=False)

    def validate(self, data: dict) -> dict:
        if ("file" in data) == ("content" in data):
            raise serializers.ValidationError({"file": "Upload a file, or send its text as content (one of the two)."})
        kind = data.get("format") or (dataset_files.format_for(data["file"].name) if "file" in data else None)
        if kind is None:
            raise serializers.ValidationError({"format": f"Say the format: one of {', '.join(dataset_files.FORMATS)}."})
        if "file" in data and data["file"].size > dataset_files.MAX_IMPORT_BYTES:
            raise serializers.ValidationError({"file": f"At most {dataset_files.MAX_IMPORT_BYTES // 2**20} MB."})
        content = data["file"].read() if "file" in data else data["content"]
        return {"content": content, "format": kind}


class ImportIn(FileIn):
    workspace = serializers.IntegerField()
    name = serializers.CharField(max_length=200)

    def validate(self, data: dict) -> dict:
        return {"workspace": data["workspace"], "name": data["name"], **super().validate(data)}


class DatasetPreviewOut(serializers.Serializer):
    format = serializers.CharField()
    row_count = serializers.IntegerField()
    variables = serializers.ListField(child=serializers.CharField())
    rows = s.DatasetRowIn(many=True)


class RenameIn(StrictIn):
    name = serializers.CharField(max_length=200)


class RowsIn(StrictIn):
    rows = s.DatasetRowIn(many=True, max_length=MAX_DATASET_ROWS)


class RowChangeIn(StrictIn):
    name = serializers.CharField(max_length=200, required=False, allow_blank=True)
    vars = serializers.DictField(child=serializers.JSONField(), required=False)


PARSERS = [MultiPartParser, FormParser, CheckedJSONParser]


class DatasetImport(APIView):
    parser_classes = PARSERS

    @extend_schema(request=ImportIn, responses={201: s.DatasetDetailOut})
    def post(self, request):
        data = ImportIn(data=request.data)
        data.is_valid(raise_exception=True)
        fields = dict(data.validated_data)
        workspace = workspace_from_body(request.user, fields.pop("workspace"))
        dataset = dataset_services.dataset_import(workspace=workspace, user=request.user, **fields)
        return Response(_dataset_detail(dataset), status=status.HTTP_201_CREATED)


class DatasetPreview(APIView):
    """What an import would create (the first rows, the count, the variables); nothing is saved."""

    parser_classes = PARSERS

    @extend_schema(request=FileIn, responses=DatasetPreviewOut)
    def post(self, request):
        data = FileIn(data=request.data)
        data.is_valid(raise_exception=True)
        return Response(DatasetPreviewOut(dataset_files.dataset_preview(**data.validated_data)).data)


class DatasetEdit(DatasetDetail):
    """A dataset: read it (as before), rename it, delete it."""

    @extend_schema(request=RenameIn, responses=s.DatasetDetailOut)
    def patch(self, request, pk):
        dataset = dataset_for_user(request.user, pk, write=True)
        data = RenameIn(data=request.data)
        data.is_valid(raise_exception=True)
        dataset_services.dataset_update(dataset=dataset, name=data.validated_data["name"])
        return Response(_dataset_detail(dataset))

    @extend_schema(request=None, responses={204: None})
    def delete(self, request, pk):
        dataset_services.dataset_delete(dataset=dataset_for_user(request.user, pk, write=True))
        return Response(status=status.HTTP_204_NO_CONTENT)


class DatasetRows(APIView):
    @extend_schema(request=RowsIn, responses={201: s.DatasetDetailOut})
    def post(self, request, pk):
        dataset = dataset_for_user(request.user, pk, write=True)
        data = RowsIn(data=request.data)
        data.is_valid(raise_exception=True)
        dataset_services.dataset_rows_append(dataset=dataset, rows=data.validated_data["rows"])
        return Response(_dataset_detail(dataset), status=status.HTTP_201_CREATED)


class DatasetRow(APIView):
    @extend_schema(request=RowChangeIn, responses=s.DatasetRowOut)
    def patch(self, request, pk, position):
        row = dataset_row(dataset_for_user(request.user, pk, write=True), position)
        data = RowChangeIn(data=request.data)
        data.is_valid(raise_exception=True)
        row = dataset_services.dataset_row_update(row=row, **data.validated_data)
        return Response(s.DatasetRowOut(row).data)

    @extend_schema(request=None, responses={204: None})
    def delete(self, request, pk, position):
        dataset_services.dataset_row_delete(row=dataset_row(dataset_for_user(request.user, pk, write=True), position))
        return Response(status=status.HTTP_204_NO_CONTENT)
