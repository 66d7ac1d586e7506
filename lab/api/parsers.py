"""The API's JSON parser: DRF's, plus the checks of lab.values, so a hostile body is a 400 naming its field.

DRF's parser lets a body nested 100,000 deep raise RecursionError (a 500) and passes NUL characters and lone
surrogates through to Postgres (a DataError). Here the first becomes a 400 naming the top-level field that
goes too deep, and a value the database cannot store is refused with its path, before any view runs. A tool's
schema (or a response schema) in a body counts its depth from itself and, too deep, is refused naming the tool.
"""

from __future__ import annotations

import json
import re
from functools import partial
from typing import Any

from rest_framework import exceptions
from rest_framework.parsers import JSONParser, get_encoding

from .. import values
from ..providers.tools import body_schema_too_deep, is_body_schema

_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}:,]')
_SHALLOW = 8  # levels of a body whose keys and indexes the scan keeps: enough for variants[j].tools[i].function


def checked_json(text: str) -> Any:
    """Parse `text` as strict JSON (no NaN or Infinity) and check every value; raises ParseError or ValidationError."""
    try:
        data = json.loads(text, parse_constant=_refuse_constant)
    except RecursionError:
        field, path, names = _too_deep_place(text)
        named = body_schema_too_deep(path, lambda prefix: names.get(len(prefix)))
        raise _invalid(field, named or values.too_deep()) from None
    except ValueError as exc:
        raise exceptions.ParseError(f"JSON parse error - {exc}") from None
    if found := values.value_problem(data, counted_apart=is_body_schema):
        path, problem = found
        field = path[0] if path and isinstance(data, dict) else None
        if problem == values.too_deep() and (named := body_schema_too_deep(path, partial(_name_at, data))):
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


def _name_at(data: Any, path: list[str]) -> Any:
    owner = data
    for part in path:
        owner = owner[int(part[1:-1])] if part.startswith("[") else owner[part]
    return owner.get("name")


def _too_deep_place(text: str) -> tuple[str | None, list[str], dict[int, str]]:
    """Where a body json could not parse nests too deep, found by a scan after the failure: the top-level key (None
    when the body is not an object); the path, as lab.values writes it (its first _SHALLOW parts), of the first
    container past the limit, a schema `is_body_schema` names counted from itself as in `checked_json`; and the
    `name` text of each object on that path seen so far, by the length of its path (so a tool written with its name
    before its schema is named). It keeps nothing per level beyond _SHALLOW."""
    depth, previous, apart = 0, "", 0
    kinds: dict[int, str] = {}  # per level (the top value is level 1): "{" or "["
    keys: dict[int, str | None] = {}
    indexes: dict[int, int] = {}
    names: dict[int, str] = {}

    def path_to(level: int) -> list[str]:
        return [str(keys[n]) if kinds[n] == "{" else f"[{indexes[n]}]" for n in range(1, min(level, _SHALLOW + 1))]

    for match in _TOKENS.finditer(text):
        token = match.group()
        if token in "[{":
            depth += 1
            if depth <= _SHALLOW:
                if not apart and is_body_schema(path_to(depth)):
                    apart = depth - 1
                kinds[depth], keys[depth], indexes[depth] = token, None, 0
                names.pop(depth, None)
            if depth - apart > values.MAX_DEPTH:
                field = keys[1] if kinds[1] == "{" else None
                return field, path_to(depth), {level - 1: name for level, name in names.items()}
        elif token in "]}":
            if depth - 1 <= apart:
                apart = 0
            depth -= 1
        elif token == "," and depth <= _SHALLOW and kinds.get(depth) == "[":
            indexes[depth] += 1
        elif token == ":" and depth <= _SHALLOW and previous.startswith('"'):
            keys[depth] = _string(previous)
        elif token.startswith('"') and previous == ":" and depth <= _SHALLOW and keys.get(depth) == "name":
            names[depth] = _string(token)
        previous = token
    return None, [], {}


def _string(token: str) -> str | None:
    try:
        return values.shown(json.loads(token))
    except ValueError:
        return None
