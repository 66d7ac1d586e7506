"""DRF authentication by `Authorization: Token <key>` against personal tokens, and the scope rule for writes.

A token only says who is calling: what they may reach is still their memberships, read on every request, so a
member removed from a workspace loses it at once, token or not.
"""

from rest_framework import authentication, exceptions, permissions

from .models import ApiToken, key_hash
from .services import api_token_touch


class ApiTokenAuthentication(authentication.TokenAuthentication):
    keyword = "Token"

    def authenticate_credentials(self, key: str):
        token = ApiToken.objects.select_related("user").filter(key_hash=key_hash(key)).first()
        if token is None:
            raise exceptions.AuthenticationFailed("Invalid token.")
        if token.revoked_at is not None:
            raise exceptions.AuthenticationFailed("This token was revoked.")
        if not token.user.is_active:
            raise exceptions.AuthenticationFailed("User inactive or deleted.")
        api_token_touch(token=token)
        return token.user, token


class TokenScopeAllows(permissions.BasePermission):
    """A read-only token may read; any change it attempts is refused with 403."""

    message = "This token is read-only; make a read-and-write token for changes."

    def has_permission(self, request, view) -> bool:
        token = request.auth
        if isinstance(token, ApiToken) and not token.can_write:
            return request.method in permissions.SAFE_METHODS
        return True
