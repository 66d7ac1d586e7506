"""The OpenAPI schema's error answers, documented once for every operation (a drf-spectacular postprocessing hook).

Views document their successes; the errors are the same everywhere, decided by shared machinery: 400 for bad
input (lab.api.parsers, the serializers), 401/403 from authentication and roles, 404 for another workspace's
object (and, as JSON, for any path under /api/ that matches nothing), 413 above the body limit
(lab.middleware), 415 for a body of a type the endpoint does not read; 429 from the token endpoint past the
password guessing limits (lab.accounts.limits); 503 with Retry-After while Postgres or Redis is away (lab.outages).
"""

from __future__ import annotations

ERROR_SCHEMA = {
    "type": "object",
    "description": 'Either {"detail": "…"} or messages per field: {"field": ["…"], "non_field_errors": ["…"]}.',
    "additionalProperties": True,
}
WRITES = {"post", "put", "patch"}
# Needs no credentials, so it never answers 401 or 403, and is the one that counts password attempts (429). Named by
# path: drf-spectacular derives operation ids from a path prefix it estimates, so an id can change under us.
PUBLIC_PATHS = {"/api/v1/auth/token/"}


def document_error_responses(result: dict, generator, request, public) -> dict:
    result.setdefault("components", {}).setdefault("schemas", {})["Error"] = ERROR_SCHEMA
    for path, operations in result.get("paths", {}).items():
        for method, operation in operations.items():
            responses = operation.setdefault("responses", {})
            parameters = operation.get("parameters", [])
            for parameter in parameters:  # Django's <int:…> matches digits only: an id is never negative
                if parameter.get("in") == "path" and parameter.get("schema", {}).get("type") == "integer":
                    parameter["schema"]["minimum"] = 0
            media_types = _media_types(responses)
            for status, description in _errors(path, method, operation).items():
                responses.setdefault(status, _error(description, media_types))
            for status, response in responses.items():  # an error a view documents itself (a 409) has its shape too
                if status.startswith("4") and not response.get("content"):
                    response["content"] = _error(response.get("description", ""), media_types)["content"]
    return result


def _errors(path: str, method: str, operation: dict) -> dict[str, str]:
    parameters = operation.get("parameters", [])
    errors = {}
    if method in WRITES or any(p.get("in") == "query" for p in parameters):
        errors["400"] = "Bad input: messages per field, or a detail"
    if path not in PUBLIC_PATHS:
        errors["401"] = "No or invalid credentials"
        errors["403"] = "Your role in the workspace does not allow this"
    if "{" in path or any(p.get("name") == "page" for p in parameters):
        errors["404"] = "No such object in your workspaces, or no such page of a list"
    if method in WRITES:
        errors["413"] = "The body is larger than the limit (DATA_UPLOAD_MAX_MEMORY_SIZE)"
        errors["415"] = "The body is of a media type this endpoint does not read"
    if path in PUBLIC_PATHS:
        errors["429"] = "Too many password attempts for this account or from this address; see Retry-After"
    errors["503"] = "The database or Redis is unavailable; try again after Retry-After seconds"
    return errors


def _error(description: str, media_types: list[str]) -> dict:
    """An error answer in each media type the operation answers in (a CSV export's errors are CSV rows)."""
    content = {
        media_type: {"schema": {"$ref": "#/components/schemas/Error"} if "json" in media_type else {"type": "string"}}
        for media_type in media_types
    }
    return {"description": description, "content": content}


def _media_types(responses: dict) -> list[str]:
    """The media types errors come in: those of the successes, but JSON where the success is binary (an image)."""
    for status, response in sorted(responses.items()):
        if status.startswith("2") and response.get("content"):
            return list(dict.fromkeys("application/json" if t.startswith("image/") else t for t in response["content"]))
    return ["application/json"]
