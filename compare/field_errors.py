"""Validation errors collected by field, so one 400 lists every problem (compare's services and round starts)."""

from __future__ import annotations

from django.core.exceptions import ValidationError


class FieldErrors:
    """Collects every problem so one 400 lists them all."""

    def __init__(self) -> None:
        self.by_field: dict[str, list[str]] = {}

    def add(self, field: str, message: str) -> None:
        self.by_field.setdefault(field, []).append(message)

    def raise_if_any(self) -> None:
        if self.by_field:
            raise ValidationError(self.by_field)
