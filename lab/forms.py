"""Page forms; they only shape input, the services decide what is valid."""

from django import forms

from .models import ConnectionKind, Role
from .providers.base import DEFAULT_MAX_CONCURRENCY


class WorkspaceForm(forms.Form):
    name = forms.CharField(max_length=120)


class MemberForm(forms.Form):
    username = forms.CharField(max_length=150)
    role = forms.ChoiceField(choices=Role.choices, initial=Role.EDITOR)


class ConnectionForm(forms.Form):
    name = forms.SlugField(max_length=60, help_text="Used in model ids, e.g. openai::gpt-4.1-mini")
    kind = forms.ChoiceField(choices=ConnectionKind.choices)
    base_url = forms.URLField(
        label="Base URL",
        required=False,
        max_length=300,
        assume_scheme="https",
        help_text="Leave empty for the provider's default.",
    )
    api_key = forms.CharField(
        label="API key",
        required=False,
        widget=forms.PasswordInput(render_value=False),
        strip=True,
        help_text="Stored encrypted; never shown again.",
    )
    max_concurrency = forms.IntegerField(min_value=1, max_value=1000, initial=DEFAULT_MAX_CONCURRENCY)
    rpm = forms.IntegerField(min_value=1, max_value=100000, initial=60, label="Requests per minute")
    tpm = forms.IntegerField(
        min_value=0,
        max_value=100_000_000,
        initial=0,
        required=False,  # left empty (or posted by a script that predates the budget): no budget
        label="Tokens per minute",
        help_text="Input plus expected output, across all workers; 0 for no budget.",
    )

    def clean_tpm(self) -> int:
        return self.cleaned_data["tpm"] or 0
