"""The password guessing limits: every way to present a password (the login form, the API's token endpoint, the
admin's login, allauth's re-authentication, the current password on the password change form) is counted here,
per account and per client address.

All of them end in Django's `authenticate()`, whose first backend is `LimitedPasswordBackend`: it records the
attempt before any password is checked, checks it, and forgets the attempt when the password was right. A wrong
one stays counted for LOGIN_WINDOW_S. Once an account has LOGIN_FAILURES_PER_ACCOUNT attempts in the window, or an
address LOGIN_FAILURES_PER_ADDRESS, every further attempt is refused without checking the password (the right
one too) until the oldest leaves the window: `PasswordGuessingLimited`, a 429 with Retry-After on the API, the
form's "too many attempts" on the login page.

Attempts live in the database, not Redis, so the limits hold and sign-in works while Redis is down. Recording
before checking means parallel guesses count each other: a burst is refused as a whole rather than slipping
through before the first failure is written.
"""

from __future__ import annotations

import hashlib
import math
from datetime import timedelta

from allauth.account.auth_backends import AuthenticationBackend
from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.db.models import Min
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.utils import timezone
from rest_framework.exceptions import Throttled

from ..client_address import client_address
from .models import PasswordAttempt


class PasswordGuessingLimited(Throttled):
    """Too many password attempts for this account or from this address; `wait` is when the next one is heard."""

    default_detail = "Too many password attempts."
    extra_detail_singular = extra_detail_plural = "Try again in {wait} seconds."


def _account_key(login: str) -> str:
    return hashlib.sha256(login.strip().lower().encode()).hexdigest()


def _retry_after(attempts, since) -> int:
    oldest = attempts.filter(at__gte=since).aggregate(oldest=Min("at"))["oldest"]
    if oldest is None:
        return 1
    return max(1, math.ceil((oldest - since).total_seconds()))


def password_attempt_begin(*, request: HttpRequest | None, login: str) -> PasswordAttempt:
    """Record an attempt at `login` from the request's client, or raise PasswordGuessingLimited (nothing recorded)
    when the account or the address already used its attempts. Without a request (a script calling
    `authenticate()` itself) only the account's limit applies."""
    now = timezone.now()
    since = now - timedelta(seconds=settings.LOGIN_WINDOW_S)
    PasswordAttempt.objects.filter(at__lt=since).delete()
    attempt = PasswordAttempt.objects.create(
        account=_account_key(login), address=client_address(request) if request is not None else "", at=now
    )
    limits = [(PasswordAttempt.objects.filter(account=attempt.account), settings.LOGIN_FAILURES_PER_ACCOUNT)]
    if attempt.address:
        limits.append((PasswordAttempt.objects.filter(address=attempt.address), settings.LOGIN_FAILURES_PER_ADDRESS))
    over = [attempts for attempts, limit in limits if attempts.filter(at__gte=since).count() > limit]
    if over:
        attempt.delete()
        raise PasswordGuessingLimited(wait=max(_retry_after(attempts, since) for attempts in over))
    return attempt


def password_attempt_succeeded(attempt: PasswordAttempt) -> None:
    """The password was right: the attempt no longer counts against the account or the address."""
    attempt.delete()


class LimitedPasswordBackend(AuthenticationBackend):
    """allauth's backend (a user name or an e-mail address, and a password) behind the limits.

    It is the only backend that checks passwords: a wrong one ends `authenticate()` (PermissionDenied) instead of
    letting the next backend check it again uncounted. The others stay listed so sessions they signed in remain
    valid."""

    def authenticate(self, request, **credentials):
        if not credentials.get("password"):
            return None
        login = credentials.get("username") or credentials.get("email") or credentials.get("phone") or ""
        attempt = password_attempt_begin(request=request, login=login)
        user = super().authenticate(request, **credentials)
        if user is None:
            raise PermissionDenied
        password_attempt_succeeded(attempt)
        return user


class PasswordLimitMiddleware:
    """A refusal raised where nothing answers it (the admin's login form): a 429 with Retry-After, JSON on the
    API, a short page elsewhere. The API's own views answer it through DRF, the login page through its form."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not isinstance(exception, PasswordGuessingLimited):
            return None
        if request.path.startswith("/api/"):
            response = JsonResponse({"detail": str(exception.detail)}, status=429)
        else:
            response = HttpResponse(str(exception.detail), content_type="text/plain; charset=utf-8", status=429)
        response["Retry-After"] = str(exception.wait)
        return response
