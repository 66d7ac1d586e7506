"""The API tokens page: a person's tokens, a form for a new one (its key shown once, on this response), revoke."""

from django import forms
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods, require_POST

from ..access import api_token_for_user
from .models import ApiToken, Scope
from .services import api_token_create, api_token_revoke


class TokenForm(forms.Form):
    name = forms.CharField(max_length=80, help_text="What will use it, e.g. “CI” or “my laptop”.")
    scope = forms.ChoiceField(choices=Scope.choices, initial=Scope.READ, widget=forms.RadioSelect)


@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def token_list(request):
    form = TokenForm(request.POST or None)
    new_key = None
    if request.method == "POST" and form.is_valid():
        try:
            token, new_key = api_token_create(user=request.user, **form.cleaned_data)
        except ValidationError as exc:
            for field, errors in exc.message_dict.items():
                form.add_error(field if field in form.fields else None, errors)
        else:
            form = TokenForm()
    tokens = ApiToken.objects.filter(user=request.user)
    return render(request, "lab/tokens.html", {"form": form, "tokens": tokens, "new_key": new_key})


@login_required
@require_POST
def token_revoke(request, token_id):
    token = api_token_for_user(request.user, token_id)
    api_token_revoke(token=token, actor=request.user)
    messages.success(request, f"Token “{token.name}” revoked; it stops working now.")
    return redirect("lab:tokens")
