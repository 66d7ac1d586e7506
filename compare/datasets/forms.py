"""Forms of the dataset pages: upload with a preview, the confirmed import, one row's edit."""

from __future__ import annotations

import json
from typing import Any

from django import forms

from lab.values import MAX_DEPTH

from .files import FORMATS


class DatasetUploadForm(forms.Form):
    name = forms.CharField(max_length=200)
    file = forms.FileField(
        required=False,
        help_text="CSV (a header row of variable names), JSON, JSONL or YAML; or a zip of one such file and the "
        "images its cells name as file:<path in the zip> (imported without a preview).",
    )
    text = forms.CharField(
        label="…or paste the rows", required=False, strip=False, widget=forms.Textarea(attrs={"rows": 5})
    )
    format = forms.ChoiceField(choices=[("", "From the file's extension"), *((f, f) for f in FORMATS)], required=False)

    def clean(self) -> dict:
        data = super().clean()
        if bool(data.get("file")) == bool((data.get("text") or "").strip()):
            raise forms.ValidationError("Upload a file or paste the rows (one of the two).")
        if data.get("text") and not data.get("format"):
            self.add_error("format", "Say the format of the pasted rows.")
        return data


class DatasetImportForm(forms.Form):
    """The confirmed import: the previewed file's text travels back in the page."""

    name = forms.CharField(max_length=200)
    format = forms.ChoiceField(choices=[(f, f) for f in FORMATS])
    content = forms.CharField(widget=forms.HiddenInput, strip=False)


class DatasetRowForm(forms.Form):
    name = forms.CharField(max_length=200, required=False)
    vars = forms.CharField(label="Variables (JSON)", widget=forms.Textarea(attrs={"rows": 3}))

    def clean_vars(self) -> Any:
        try:
            return json.loads(self.cleaned_data["vars"])
        except ValueError as exc:
            raise forms.ValidationError(f"Not valid JSON: {exc}") from None
        except RecursionError:
            raise forms.ValidationError(f"Not valid JSON: nested more than {MAX_DEPTH} levels deep.") from None
