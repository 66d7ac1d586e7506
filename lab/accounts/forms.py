"""allauth's forms as the lab uses them: the login form, also reached as `username` (the lab's login page, scripts
and tests have always posted `username` and `password`), and the password change, whose current password is
checked behind the guessing limits like any other password (lab/accounts/limits.py)."""

from allauth.account.adapter import get_adapter
from allauth.account.forms import ChangePasswordForm as AllauthChangePasswordForm
from allauth.account.forms import LoginForm as AllauthLoginForm
from django.contrib.auth import authenticate

from .limits import PasswordGuessingLimited


class LoginForm(AllauthLoginForm):
    def __init__(self, *args, **kwargs):
        data = kwargs.get("data")
        if data is not None and "login" not in data and "username" in data:
            data = data.copy()
            data["login"] = data["username"]
            kwargs["data"] = data
        super().__init__(*args, **kwargs)


class ChangePasswordForm(AllauthChangePasswordForm):
    def clean_oldpassword(self) -> str:
        password = self.cleaned_data.get("oldpassword", "")
        try:
            # No request here: the account's limit applies, the address's cannot.
            user = authenticate(username=self.user.get_username(), password=password)
        except PasswordGuessingLimited:
            raise get_adapter().validation_error("too_many_login_attempts") from None
        if user is None or user.pk != self.user.pk:
            raise get_adapter().validation_error("enter_current_password")
        return password
