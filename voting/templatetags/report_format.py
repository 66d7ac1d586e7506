"""Template filters for the report pages beyond the lab-wide figures (lab/templatetags/numbers.py): ratings."""

from django import template

from lab.stats.wording import rating_text

register = template.Library()
NONE = "—"


@register.filter
def rating(value: float | None) -> str:
    """A Bradley–Terry rating, whole and with thousands separators (halves up, as every figure)."""
    return NONE if value is None else rating_text(value)
