"""Template tags for the account pages: what the account adapter allows, asked of the adapter itself."""

from allauth.account.adapter import get_adapter
from django import template

register = template.Library()


@register.simple_tag(takes_context=True)
def signup_open(context) -> bool:
    """Whether this visitor may sign up now (closed sign-up still opens for someone holding an invitation)."""
    request = context["request"]
    return get_adapter(request).is_open_for_signup(request)
