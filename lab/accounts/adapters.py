"""The lab's rules for allauth: who may sign up, which e-mail domains single sign-on accepts, and the first
workspace every new account gets (unless it signs up through an invitation: it joins that workspace instead)."""

from allauth.account.adapter import DefaultAccountAdapter
from allauth.core.exceptions import ImmediateHttpResponse
from allauth.socialaccount.adapter import DefaultSocialAccountAdapter
from django.conf import settings
from django.contrib import messages
from django.shortcuts import render

from .. import services
from ..client_address import client_address
from ..invitations.services import invitation_accept_opened, invitation_opened_in
from ..models import Membership
from .limits import PasswordGuessingLimited

# The provider_id the settings give the OpenID Connect app; accounts it signs in are stored under this name.
OIDC_PROVIDER = "oidc"


def email_domain_allowed(email: str) -> bool:
    """OIDC_ALLOWED_EMAIL_DOMAINS empty: any domain; else the address's domain must be one of them exactly."""
    allowed = settings.OIDC_ALLOWED_EMAIL_DOMAINS
    if not allowed:
        return True
    domain = (email or "").rpartition("@")[2].lower()
    return bool(domain) and domain in allowed


class AccountAdapter(DefaultAccountAdapter):
    def is_open_for_signup(self, request) -> bool:
        return settings.REGISTRATION_OPEN or invitation_opened_in(request.session) is not None

    def authenticate(self, request, **credentials):
        """The login form's (and re-authentication's) check; over the guessing limits it is the form's own
        "too many attempts" error."""
        try:
            return super().authenticate(request, **credentials)
        except PasswordGuessingLimited:
            raise self.validation_error("too_many_login_attempts") from None

    def get_client_ip(self, request) -> str:
        """allauth's other limits (sign-up, password reset mails) key on the same client as the password limits."""
        return client_address(request)

    def save_user(self, request, user, form, commit=True):
        user = super().save_user(request, user, form, commit=commit)
        if commit:
            _first_workspace(request, user)
        return user

    def login(self, request, user) -> None:
        super().login(request, user)
        _join_opened_invitation(request, user)


class SocialAccountAdapter(DefaultSocialAccountAdapter):
    def is_open_for_signup(self, request, sociallogin) -> bool:
        if sociallogin.account.provider == OIDC_PROVIDER:
            return settings.OIDC_ALLOW_SIGNUP or invitation_opened_in(request.session) is not None
        return super().is_open_for_signup(request, sociallogin)

    def pre_social_login(self, request, sociallogin) -> None:
        """Refuse an identity-provider account whose verified address is outside the allowed domains."""
        if sociallogin.account.provider != OIDC_PROVIDER or not settings.OIDC_ALLOWED_EMAIL_DOMAINS:
            return
        verified = [address.email for address in sociallogin.email_addresses if address.verified]
        if not any(email_domain_allowed(email) for email in verified):
            shown = verified[0] if verified else (sociallogin.user.email or "no verified address")
            raise ImmediateHttpResponse(
                render(
                    request,
                    "account/sso_refused.html",
                    {"email": shown, "domains": settings.OIDC_ALLOWED_EMAIL_DOMAINS},
                    status=403,
                )
            )

    def save_user(self, request, sociallogin, form=None):
        user = super().save_user(request, sociallogin, form=form)
        _first_workspace(request, user)
        return user


def _first_workspace(request, user) -> None:
    """The invitation the sign-up came through, or a workspace of its own."""
    if _join_opened_invitation(request, user) is None:
        services.account_first_workspace(user=user)


def _join_opened_invitation(request, user) -> Membership | None:
    membership = invitation_accept_opened(session=request.session, user=user)
    if membership is not None:
        role = membership.get_role_display().lower()
        messages.success(request, f"Welcome to {membership.workspace.name}, as {role}.")
    return membership
