"""Writes for API tokens: create (the key is returned once), revoke, and note when one was last used."""

import secrets
from datetime import timedelta

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from ..audit.models import Action
from ..audit.services import audit_record_for_user
from .models import ApiToken, Scope, key_hash

KEY_PREFIX = "pl_"
# A token's "last used" is written at most this often, so a busy script does not write on every request.
TOUCH_EVERY = timedelta(minutes=1)


@transaction.atomic
def api_token_create(*, user, name: str, scope: str = Scope.WRITE) -> tuple[ApiToken, str]:
    """A new token and its key; the key is not stored, so this is the only time anyone sees it."""
    name = (name or "").strip()
    if not name:
        raise ValidationError({"name": "Name the token after what will use it, e.g. “CI” or “my laptop”."})
    if len(name) > 80:
        raise ValidationError({"name": "A token's name has at most 80 characters."})
    if scope not in Scope.values:
        raise ValidationError({"scope": f"Scope must be one of: {', '.join(Scope.values)}."})
    key = KEY_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(user=user, name=name, scope=scope, key_hash=key_hash(key), prefix=key[:10])
    audit_record_for_user(actor=user, action=Action.TOKEN_CREATED, target=token, details={"scope": scope})
    return token, key


@transaction.atomic
def api_token_revoke(*, token: ApiToken, actor) -> ApiToken:
    if token.revoked_at is None:
        token.revoked_at = timezone.now()
        token.save(update_fields=["revoked_at"])
        audit_record_for_user(actor=actor, action=Action.TOKEN_REVOKED, target=token, details={})
    return token


def api_token_touch(*, token: ApiToken) -> None:
    now = timezone.now()
    if token.last_used_at is None or now - token.last_used_at >= TOUCH_EVERY:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now
