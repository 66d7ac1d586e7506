"""The API's JSON parser: DRF's, plus the checks of lab.values, so a hostile body is a 400 naming its field.

DRF's parser lets a body nested 100,000 deep raise RecursionError (a 500) and passes NUL characters and lone
surrogates through to Postgres (a DataError). Here the first becomes a 400 naming the top-level field that
goes too deep, and a value the database cannot store is refused with its path, before any view runs. A tool's
schema (or a response schema) in a body counts its depth from itself and, too deep, is refused naming the tool.
"""

from __future__ import annotations

import json
import re
from typing import Any

from rest_framework import exceptions
from rest_framework.parsers import JSONParser, get_encoding

from .. import values
from ..providers.tools import body_schema_too_deep, is_body_schema

_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}:]')


def checked_json(text: str) -> Any:
    """Parse `text` as strict JSON (no NaN or Infinity) and check every value; raises ParseError or ValidationError."""
    try:
        data = json.loads(text, parse_constant=_refuse_constant)
    except RecursionError:
        field = _too_deep_field(text)
        raise _invalid(field, f"nested more than {values.MAX_DEPTH} levels deep.") from None
    except ValueError as exc:
        raise exceptions.ParseError(f"JSON parse error - {exc}") from None
    if found := values.value_problem(data, counted_apart=is_body_schema):
        path, problem = found
        field = path[0] if path and isinstance(data, dict) else None
        if problem == values.too_deep() and (named := body_schema_too_deep(data, path)):
            raise _invalid(field, named)  # the tool (or response schema) by name, as its own validator would
        where = values.dotted(path)
        raise _invalid(field, f"{where}: {problem}" if where else problem)
    return data


class CheckedJSONParser(JSONParser):
    def parse(self, stream, media_type=None, parser_context=None):
        encoding = get_encoding(parser_context or {})
        raw = stream.read() if stream is not None else b""
        try:
            text = raw.decode(encoding)
        except UnicodeDecodeError as exc:
            raise exceptions.ParseError(f"JSON parse error - the body is not valid {encoding}: {exc}") from None
        return checked_json(text)


def _invalid(field: str | None, message: str) -> exceptions.ValidationError:
    return exceptions.ValidationError({field or "non_field_errors": [message]})


def _refuse_constant(name: str):
    raise ValueError(f"{name} is not a JSON number")


def _too_deep_field(text: str) -> str | None:
    """The top-level key whose value nests too deep, found by a scan that keeps no stack (only after a failure)."""
    depth, key, previous, top_is_object = 0, None, "", text.lstrip()[:1] == "{"
    for match in _TOKENS.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth > values.MAX_DEPTH:
                return key if top_is_object else None
        elif token in "]}":
            depth -= 1
        elif token == ":" and depth == 1 and previous.startswith('"'):
            try:
                key = values.shown(json.loads(previous))
            except ValueError:
                key = None
        previous = token
    return key if top_is_object else None
