"""Forms of the experiment pages. Building an experiment in the form makes the same data a file holds,
so the file's checks (and their messages) apply to both."""

from __future__ import annotations

from typing import Any

import yaml
from django import forms

from lab import safe_yaml

from ..hooks import scorer
from ..models import Dataset
from .spec import STRUCTURED_FORMATS

UPLOAD_HELP = "YAML or JSON. Files it names ($file: prompts, file: datasets) are uploaded beside it."


class MultipleFileInput(forms.ClearableFileInput):
    allow_multiple_selected = True


class MultipleFileField(forms.FileField):
    """Several files in one input (Django's documented recipe): cleans to a list."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("widget", MultipleFileInput())
        super().__init__(*args, **kwargs)

    def clean(self, data, initial=None) -> list:
        if isinstance(data, list | tuple):
            return [super(MultipleFileField, self).clean(item, initial) for item in data]
        return [super().clean(data, initial)] if data else []


class UploadForm(forms.Form):
    config = forms.FileField(label="Experiment file", help_text=UPLOAD_HELP)
    files = MultipleFileField(label="Files it names", required=False)
    budget = forms.DecimalField(label="Budget cap (USD)", required=False, min_value=0.000001, decimal_places=6)


class ParamSetForm(forms.Form):
    name = forms.CharField(max_length=80, required=False)
    temperature = forms.FloatField(min_value=0, max_value=2, required=False)
    topP = forms.FloatField(label="topP", min_value=0, max_value=1, required=False)
    maxOutputTokens = forms.IntegerField(label="maxOutputTokens", min_value=1, required=False)


class PromptForm(forms.Form):
    """A prompt: its text, or a chat prompt's messages (a JSON or YAML list of {role, content}), checked as a file's."""

    name = forms.CharField(max_length=80, required=False)
    prompt = forms.CharField(widget=forms.Textarea(attrs={"rows": 4}), required=False, strip=False)
    messages = forms.CharField(
        label="…or messages",
        widget=forms.Textarea(
            attrs={
                "rows": 3,
                "placeholder": '[{"role": "system", "content": "…"}, {"role": "user", "content": "<<question>>"}]',
                "spellcheck": "false",
            }
        ),
        required=False,
        strip=False,
        help_text="A JSON or YAML list of {role, content}: system, user and assistant turns (few-shot, a prefill).",
    )

    def clean_messages(self) -> Any:
        text = self.cleaned_data["messages"]
        return _structured(text) if text.strip() else None


ParamSetFormSet = forms.formset_factory(ParamSetForm, extra=3, max_num=10)
PromptFormSet = forms.formset_factory(PromptForm, extra=3, max_num=10)


def _structured(text: str) -> Any:
    """JSON or YAML text as data; a field error when it is neither."""
    try:
        return safe_yaml.load(text)
    except yaml.YAMLError as exc:
        raise forms.ValidationError(f"Not valid JSON or YAML: {exc}") from None


class BuildForm(forms.Form):
    """The parts of an experiment file; parameter sets and prompts come in their formsets."""

    name = forms.CharField(label="Title", max_length=200)
    models = forms.MultipleChoiceField(label="Models", required=False, widget=forms.CheckboxSelectMultiple)
    other_models = forms.CharField(
        label="Other model ids (one per line)", required=False, widget=forms.Textarea(attrs={"rows": 2})
    )
    dataset = forms.ModelChoiceField(
        label="A dataset of this workspace", required=False, queryset=Dataset.objects.none()
    )
    rows = forms.CharField(
        label="…or rows, as YAML or JSON: a list of {name, vars}",
        required=False,
        widget=forms.Textarea(attrs={"rows": 5}),
    )
    evaluation_type = forms.ChoiceField(label="Judge the answers", required=False)
    judge = forms.CharField(label="Judge model", required=False, max_length=300)
    evaluator_prompt = forms.CharField(
        label="Custom evaluator prompt (optional)", required=False, widget=forms.Textarea(attrs={"rows": 4})
    )
    schema = forms.CharField(
        label="Structured output: JSON schema of an answer (optional)",
        required=False,
        widget=forms.Textarea(attrs={"rows": 4}),
    )
    output_format = forms.ChoiceField(label="Shown to the judge as", choices=[(f, f) for f in STRUCTURED_FORMATS])
    cache = forms.BooleanField(
        label="Reuse cached answers",
        required=False,
        help_text="A call identical to one answered before in this workspace takes that answer: no request, cost 0, "
        "marked cached. Errors and cut-off answers are never reused.",
    )
    budget = forms.DecimalField(label="Budget cap (USD)", required=False, min_value=0.000001, decimal_places=6)

    def __init__(self, *args, workspace, model_choices: list[str], **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["models"].choices = [(m, m) for m in model_choices]
        self.fields["dataset"].queryset = Dataset.objects.filter(workspace=workspace)
        judging = scorer()
        types = list(judging.types) if judging else []
        self.fields["evaluation_type"].choices = [("", "No judge"), *((t, t) for t in types)]

    def clean_rows(self) -> Any:
        text = self.cleaned_data["rows"]
        return _structured(text) if text.strip() else None

    def clean_schema(self) -> Any:
        text = self.cleaned_data["schema"]
        return _structured(text) if text.strip() else None

    def config_data(self, param_sets: list[dict], prompts: list[dict]) -> dict[str, Any]:
        """The experiment file this form describes (checked afterwards like any file)."""
        data = self.cleaned_data
        others = [line.strip() for line in data["other_models"].splitlines() if line.strip()]
        config: dict[str, Any] = {
            "name": data["name"],
            "models": [{"model": model} for model in [*data["models"], *others]],
            "prompts": prompts,
        }
        if param_sets:
            config["model-parameters"] = param_sets
        if data["dataset"] is not None:
            config["dataset"] = [{"dataset": data["dataset"].pk}]
        elif data["rows"] is not None:
            config["dataset"] = data["rows"]
        if data["evaluation_type"]:
            config["evaluation"] = {"type": data["evaluation_type"], "model": data["judge"]}
            if data["evaluator_prompt"].strip():
                config["evaluation"]["prompt"] = data["evaluator_prompt"]
        if data["schema"] is not None:
            config["structured-output"] = {"schema": data["schema"], "format": data["output_format"]}
        if data["cache"]:
            config["cache"] = True
        return config


def filled(formset: forms.BaseFormSet) -> list[dict[str, Any]]:
    """The formset's rows that say something, without empty fields."""
    rows = []
    for form in formset:
        values = {key: value for key, value in (form.cleaned_data or {}).items() if value not in (None, "")}
        if values:
            rows.append(values)
    return rows
