"""Request-wide guards: a body over the size limit is a JSON 413 that names the limit, before anything reads it.

Django refuses such a body only when something reads it, and then as an HTML "Bad Request (400)" that names
nothing; DRF's JSON parser streams the body and never checks at all. Here the declared length is checked first,
and the limit errors Django raises later (a multipart body with too many fields) become JSON as well. A chunked
body declares no length: DRF reads it as empty and no limit applies, so it is a 411 saying to send the length.
A query parameter holding text the database cannot store (a NUL) is a 400 naming the parameter, for every filter.
"""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.http import JsonResponse

from . import values

MB = 1024 * 1024


def body_limit_response(length: int | None = None, *, limit: int | None = None, setting: str = "") -> JsonResponse:
    limit = limit or settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    size = f"The request body is {length / MB:.1f} MB; " if length else "The request body is too large; "
    detail = f"{size}the limit is {limit / MB:.0f} MB ({setting or 'DATA_UPLOAD_MAX_MEMORY_SIZE'})."
    return JsonResponse({"detail": detail, "limit_bytes": limit}, status=413)


def body_limit(request) -> tuple[int, str]:
    """The largest body a request may declare, and the setting that says so. A multipart body carries a file, whose
    own limit (FILES_MAX_BYTES, checked again while it streams) may be larger than the one for form fields."""
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    if request.META.get("CONTENT_TYPE", "").startswith("multipart/") and limit < settings.FILES_MAX_BYTES + MB:
        return settings.FILES_MAX_BYTES + MB, "FILES_MAX_BYTES"
    return limit, "DATA_UPLOAD_MAX_MEMORY_SIZE"


class BodyLimitMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        declared = request.META.get("CONTENT_LENGTH") or "0"
        try:
            length = int(declared)
        except ValueError:
            return JsonResponse({"detail": "The Content-Length header is not a number of bytes."}, status=400)
        limit, setting = body_limit(request)
        if settings.DATA_UPLOAD_MAX_MEMORY_SIZE is not None and length > limit:
            return body_limit_response(length, limit=limit, setting=setting)
        if "chunked" in request.META.get("HTTP_TRANSFER_ENCODING", "").lower() and "CONTENT_LENGTH" not in request.META:
            detail = "Send the body with a Content-Length header; a chunked request body is not read."
            return JsonResponse({"detail": detail}, status=411)
        if found := query_problem(request.GET):
            return JsonResponse(found, status=400)
        return self.get_response(request)

    def process_exception(self, request, exception):
        if isinstance(exception, RequestDataTooBig):
            return body_limit_response()
        if isinstance(exception, TooManyFieldsSent | TooManyFilesSent):
            name = (
                "DATA_UPLOAD_MAX_NUMBER_FIELDS"
                if isinstance(exception, TooManyFieldsSent)
                else "DATA_UPLOAD_MAX_NUMBER_FILES"
            )
            return JsonResponse({"detail": f"The request has more fields than the limit ({name})."}, status=400)
        return None


def query_problem(query) -> dict[str, list[str]] | None:
    """The first query parameter (name or value) that no filter can use, as a 400's body naming it; None when all
    can. The one rule for every filter, API and page: a NUL reaches Postgres as an error (a 500) or is ignored."""
    for name, given in query.lists():
        for text in (name, *given):
            if problem := values.text_problem(text):
                return {values.shown(name): [f"A query parameter's {problem[0].lower()}{problem[1:]}"]}
    return None
