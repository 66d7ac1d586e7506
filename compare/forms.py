"""Inputs of the comparison pages: the history's filters, the editor's "save and run" body, and the prompt
library's "New prompt"."""

from django import forms
from rest_framework import serializers

from .api.groups import GroupFieldsIn
from .models import Mode
from .rounds.start import MAX_REPEAT


class HistoryFilterForm(forms.Form):
    """GET filters of the history; an invalid value is ignored (and shown), never a server error."""

    q = forms.CharField(label="Search", required=False, max_length=200)
    mode = forms.ChoiceField(label="Mode", required=False)
    model = forms.ChoiceField(label="Model", required=False)
    author = forms.TypedChoiceField(label="Author", required=False, coerce=int, empty_value=None)
    date_from = forms.DateField(label="From", required=False, widget=forms.DateInput(attrs={"type": "date"}))
    date_to = forms.DateField(label="To", required=False, widget=forms.DateInput(attrs={"type": "date"}))

    def __init__(self, data, *, models: list[str], authors: list[tuple[int, str]]):
        super().__init__(data)
        self.fields["mode"].choices = [
            ("", "Any mode"),
            (Mode.PROMPTS, "Prompt versions"),
            (Mode.MODELS, "Models"),
            (Mode.CUSTOM, "Experiments"),
        ]
        self.fields["model"].choices = [("", "Any model"), *((m, m) for m in models)]
        self.fields["author"].choices = [("", "Anyone"), *authors]

    def filters(self) -> dict:
        """The valid, non-empty filters, by the names `page_selectors.history` takes."""
        self.is_valid()  # keeps the valid fields in cleaned_data; an invalid one shows its error and is ignored
        return {name: value for name, value in self.cleaned_data.items() if value not in (None, "")}


class PromptNewForm(forms.Form):
    """The library page's "New prompt": a prompt with its first version. The form checks what a browser could;
    the name's rules and the text's storability are compare.prompts.services', whose errors land on these fields."""

    name = forms.CharField(label="Name", max_length=200)
    text = forms.CharField(label="Text", widget=forms.Textarea(attrs={"rows": 5}), strip=False)
    system_prompt = forms.CharField(
        label="System prompt", required=False, widget=forms.Textarea(attrs={"rows": 2}), strip=False
    )
    message = forms.CharField(label="What it is for", required=False, max_length=2000)

    def add_service_errors(self, errors: dict[str, list[str]]) -> None:
        """A service's ValidationError (by field) on the form: on its field, or on the form when it has none."""
        for field, messages in errors.items():
            self.add_error(field if field in self.fields else None, messages)


class EditorSaveIn(GroupFieldsIn):
    """What the editor posts: the API's group fields, how many rounds to run (or the dataset to run one round per
    row of), and the group it was cloned from."""

    repeat = serializers.IntegerField(min_value=1, max_value=MAX_REPEAT, required=False, default=1)
    dataset = serializers.IntegerField(required=False, allow_null=True, default=None)
    cloned_from = serializers.IntegerField(required=False, allow_null=True, default=None)

    def validate_mode(self, mode: str) -> str:
        if mode == Mode.CUSTOM:
            raise serializers.ValidationError("Experiments are made on the experiments page.")
        return mode
