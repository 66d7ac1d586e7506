"""allauth's login form, also reached as `username`: the lab's login page, scripts and tests have always posted
`username` and `password`, and keep working."""

from allauth.account.forms import LoginForm as AllauthLoginForm


class LoginForm(AllauthLoginForm):
    def __init__(self, *args, **kwargs):
        data = kwargs.get("data")
        if data is not None and "login" not in data and "username" in data:
            data = data.copy()
            data["login"] = data["username"]
            kwargs["data"] = data
        super().__init__(*args, **kwargs)
