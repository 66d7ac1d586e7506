"""Reading an uploaded file with its size bounded while it streams: past the limit the upload stops at once (a JSON
413 naming the limit) and nothing of it is kept. Django's own limit (DATA_UPLOAD_MAX_MEMORY_SIZE) does not count
file parts, so without this a multipart body is read whole, whatever its size."""

from __future__ import annotations

from django.core.files.uploadhandler import TemporaryFileUploadHandler
from django.http.multipartparser import MultiPartParser as DjangoMultiPartParser
from django.http.multipartparser import MultiPartParserError
from rest_framework import exceptions
from rest_framework.parsers import DataAndFiles, MultiPartParser, get_encoding

MB = 1024 * 1024


class UploadTooLarge(exceptions.APIException):
    status_code = 413
    default_code = "too_large"


class BoundedUploadHandler(TemporaryFileUploadHandler):
    """Django's temporary-file handler that stops the upload once a file passes `limit` bytes."""

    def __init__(self, request, *, limit: int, setting: str):
        super().__init__(request)
        self.limit, self.setting, self.received = limit, setting, 0

    def receive_data_chunk(self, raw_data, start):
        self.received += len(raw_data)
        if self.received > self.limit:
            self.file.close()  # a temporary file: closing removes it
            raise UploadTooLarge(
                {self.field_name: [f"The file is larger than the limit of {self.limit / MB:g} MB ({self.setting})."]}
            )
        return super().receive_data_chunk(raw_data, start)


def bounded_multipart_parser(*, limit_of, setting: str) -> type[MultiPartParser]:
    """A DRF multipart parser whose files are bounded by `limit_of()` bytes (read at each request, so a test's
    settings apply)."""

    class BoundedMultiPartParser(MultiPartParser):
        def parse(self, stream, media_type=None, parser_context=None):
            request = parser_context["request"]
            meta = request.META.copy()
            meta["CONTENT_TYPE"] = media_type
            handlers = [BoundedUploadHandler(request, limit=limit_of(), setting=setting)]
            try:
                data, files = DjangoMultiPartParser(meta, stream, handlers, get_encoding(parser_context)).parse()
            except MultiPartParserError as exc:
                raise exceptions.ParseError(f"Multipart form parse error - {exc}") from None
            return DataAndFiles(data, files)

    return BoundedMultiPartParser
