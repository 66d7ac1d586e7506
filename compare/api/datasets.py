"""Dataset API: list, create, read, rename and delete datasets, import a file (CSV, JSON, JSONL, YAML) or preview
one, and add, change or delete rows. Its In/Out serializers first, then the views; thin: the rules are in
compare.datasets.services and compare.datasets.files; another workspace's dataset is a 404."""

from __future__ import annotations

from django.conf import settings
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import generics, serializers, status
from rest_framework.parsers import FormParser
from rest_framework.response import Response
from rest_framework.views import APIView

from lab.api.inputs import StrictIn
from lab.api.parsers import CheckedJSONParser
from lab.files.uploads import bounded_multipart_parser

from .. import selectors
from ..access import dataset_for_user, dataset_row, workspace_from_body
from ..datasets import files as dataset_files
from ..datasets import services as dataset_services
from ..datasets.rows import MAX_DATASET_ROWS
from ..datasets.zips import zip_preview
from ..models import Dataset, DatasetRow
from .assertions import with_promptfoo_key


class DatasetRowIn(StrictIn):
    name = serializers.CharField(max_length=200, required=False, allow_blank=True, default="")
    vars = serializers.DictField(child=serializers.JSONField())
    assertions = serializers.JSONField(
        required=False, help_text="this row's own assertions, graded after the comparison's (promptfoo's `assert`)"
    )

    def to_internal_value(self, data):
        data = with_promptfoo_key(data)
        return super().to_internal_value(data)


class DatasetIn(StrictIn):
    workspace = serializers.IntegerField()
    name = serializers.CharField(max_length=200)
    rows = DatasetRowIn(many=True, max_length=MAX_DATASET_ROWS)


class DatasetFilterIn(serializers.Serializer):
    """The list's query (a filter, not a body: the paginator's `page` rides along)."""

    workspace = serializers.IntegerField(required=False, allow_null=True, default=None)


class FileIn(StrictIn):
    """A file upload (multipart `file`) or its text (`content`); the format defaults to the file's extension."""

    file = serializers.FileField(required=False)
    content = serializers.CharField(required=False, trim_whitespace=False, max_length=dataset_files.MAX_IMPORT_BYTES)
    format = serializers.ChoiceField(choices=dataset_files.IMPORT_FORMATS, required=False)

    def validate(self, data: dict) -> dict:
        if ("file" in data) == ("content" in data):
            raise serializers.ValidationError({"file": "Upload a file, or send its text as content (one of the two)."})
        kind = data.get("format") or (dataset_files.format_for(data["file"].name) if "file" in data else None)
        if kind is None:
            raise serializers.ValidationError({"format": f"Say the format: one of {', '.join(dataset_files.FORMATS)}."})
        if kind == dataset_files.ZIP and "file" not in data:
            raise serializers.ValidationError({"file": "Upload the zip as a file."})
        # A zip (rows and images) is bounded by the upload limit and by its own (datasets.zips), not by this one.
        if "file" in data and kind != dataset_files.ZIP and data["file"].size > dataset_files.MAX_IMPORT_BYTES:
            raise serializers.ValidationError({"file": f"At most {dataset_files.MAX_IMPORT_BYTES // 2**20} MB."})
        content = data["file"].read() if "file" in data else data["content"]
        return {"content": content, "format": kind}


class ImportIn(FileIn):
    workspace = serializers.IntegerField()
    name = serializers.CharField(max_length=200)

    def validate(self, data: dict) -> dict:
        return {"workspace": data["workspace"], "name": data["name"], **super().validate(data)}


class RenameIn(StrictIn):
    name = serializers.CharField(max_length=200)


class RowsIn(StrictIn):
    rows = DatasetRowIn(many=True, max_length=MAX_DATASET_ROWS)


class RowChangeIn(StrictIn):
    name = serializers.CharField(max_length=200, required=False, allow_blank=True)
    vars = serializers.DictField(child=serializers.JSONField(), required=False)


class DatasetRowOut(serializers.ModelSerializer):
    class Meta:
        model = DatasetRow
        fields = ["id", "position", "name", "vars", "assertions"]


class DatasetOut(serializers.ModelSerializer):
    row_count = serializers.IntegerField(read_only=True)  # annotated by the view

    class Meta:
        model = Dataset
        fields = ["id", "workspace", "name", "created_at", "row_count"]


class DatasetDetailOut(DatasetOut):
    rows = DatasetRowOut(many=True)

    class Meta(DatasetOut.Meta):
        fields = [*DatasetOut.Meta.fields, "rows"]


class DatasetPreviewOut(serializers.Serializer):
    format = serializers.CharField()
    row_count = serializers.IntegerField()
    variables = serializers.ListField(child=serializers.CharField())
    rows = DatasetRowIn(many=True)


# Uploads are bounded while they stream (a zip of images may be as large as an image upload).
PARSERS = [
    bounded_multipart_parser(limit_of=lambda: settings.FILES_MAX_BYTES, setting="FILES_MAX_BYTES"),
    FormParser,
    CheckedJSONParser,
]


class DatasetList(generics.GenericAPIView):
    serializer_class = DatasetOut

    @extend_schema(
        operation_id="datasets_list",
        responses=DatasetOut(many=True),
        parameters=[OpenApiParameter("workspace", int, description="only this workspace")],
    )
    def get(self, request):
        query = DatasetFilterIn(data=request.query_params)
        query.is_valid(raise_exception=True)
        page = self.paginate_queryset(selectors.datasets_for_user(request.user, **query.validated_data))
        return self.get_paginated_response(DatasetOut(page, many=True).data)

    @extend_schema(request=DatasetIn, responses={201: DatasetDetailOut})
    def post(self, request):
        data = DatasetIn(data=request.data)
        data.is_valid(raise_exception=True)
        fields = dict(data.validated_data)
        workspace = workspace_from_body(request.user, fields.pop("workspace"))
        dataset = dataset_services.dataset_create(workspace=workspace, user=request.user, **fields)
        return Response(_dataset_detail(dataset), status=status.HTTP_201_CREATED)


def _dataset_detail(dataset: Dataset) -> dict:
    return DatasetDetailOut(selectors.dataset_with_rows(dataset)).data


class DatasetImport(APIView):
    parser_classes = PARSERS

    @extend_schema(request=ImportIn, responses={201: DatasetDetailOut})
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
        if data.validated_data["format"] == dataset_files.ZIP:
            return Response(DatasetPreviewOut(zip_preview(data.validated_data["content"])).data)
        return Response(DatasetPreviewOut(dataset_files.dataset_preview(**data.validated_data)).data)


class DatasetDetail(APIView):
    """A dataset: read it, rename it, delete it."""

    @extend_schema(responses=DatasetDetailOut)
    def get(self, request, pk):
        return Response(_dataset_detail(dataset_for_user(request.user, pk)))

    @extend_schema(request=RenameIn, responses=DatasetDetailOut)
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
    @extend_schema(request=RowsIn, responses={201: DatasetDetailOut})
    def post(self, request, pk):
        dataset = dataset_for_user(request.user, pk, write=True)
        data = RowsIn(data=request.data)
        data.is_valid(raise_exception=True)
        dataset_services.dataset_rows_append(dataset=dataset, rows=data.validated_data["rows"])
        return Response(_dataset_detail(dataset), status=status.HTTP_201_CREATED)


class DatasetRowDetail(APIView):
    @extend_schema(request=RowChangeIn, responses=DatasetRowOut)
    def patch(self, request, pk, position):
        row = dataset_row(dataset_for_user(request.user, pk, write=True), position)
        data = RowChangeIn(data=request.data)
        data.is_valid(raise_exception=True)
        row = dataset_services.dataset_row_update(row=row, **data.validated_data)
        return Response(DatasetRowOut(row).data)

    @extend_schema(request=None, responses={204: None})
    def delete(self, request, pk, position):
        dataset_services.dataset_row_delete(row=dataset_row(dataset_for_user(request.user, pk, write=True), position))
        return Response(status=status.HTTP_204_NO_CONTENT)
