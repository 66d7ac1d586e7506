"""Forms of the experiment pages. Building an experiment in the form makes the same data a file holds,
so the file's checks (and their messages) apply to both."""

from __future__ import annotations

from typing import Any

import yaml
from django import forms

from lab import safe_yaml
from lab.providers.tools import TOOL_CHOICES

from ..hooks import scorer
from ..models import MAX_EXPERIMENT_VARIANTS, Dataset
from .spec import FAMILY_RULES, MAX_TIMEOUT_S, STRUCTURED_FORMATS

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
    """One `model-parameters` entry: every parameter the file takes, by the file's names."""

    name = forms.CharField(max_length=80, required=False)
    temperature = forms.FloatField(min_value=0, max_value=2, required=False)
    topP = forms.FloatField(label="topP", min_value=0, max_value=1, required=False)
    topK = forms.IntegerField(label="topK", min_value=1, max_value=1000, required=False)
    maxOutputTokens = forms.IntegerField(label="maxOutputTokens", min_value=1, max_value=1_000_000, required=False)
    seed = forms.IntegerField(label="seed", min_value=0, max_value=2**53, required=False)
    presencePenalty = forms.FloatField(label="presencePenalty", min_value=-2, max_value=2, required=False)
    frequencyPenalty = forms.FloatField(label="frequencyPenalty", min_value=-2, max_value=2, required=False)
    stopSequences = forms.CharField(
        label="stopSequences (one a line, up to 4)",
        required=False,
        strip=False,
        widget=forms.Textarea(attrs={"rows": 1}),
    )

    def clean_stopSequences(self) -> list[str] | None:  # noqa: N802 (the file's parameter name)
        lines = [line for line in self.cleaned_data["stopSequences"].splitlines() if line]
        if len(lines) > 4:
            raise forms.ValidationError(f"Up to 4 stop sequences; this has {len(lines)}.")
        return lines or None


class PromptForm(forms.Form):
    """A prompt: its text, or a chat prompt's messages (a JSON or YAML list of {role, content}), checked as a file's."""

    name = forms.CharField(max_length=80, required=False)
    prompt = forms.CharField(widget=forms.Textarea(attrs={"rows": 4}), required=False, strip=False)
    variables = forms.CharField(
        label="Variables only this prompt gets (YAML or JSON mapping, optional)",
        required=False,
        widget=forms.Textarea(attrs={"rows": 1}),
    )

    def clean_variables(self) -> Any:
        text = self.cleaned_data["variables"]
        return _structured(text) if text.strip() else None

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


# An experiment has at most MAX_EXPERIMENT_VARIANTS combinations, so at most that many prompts or parameter sets.
ParamSetFormSet = forms.formset_factory(
    ParamSetForm, extra=1, max_num=MAX_EXPERIMENT_VARIANTS, absolute_max=MAX_EXPERIMENT_VARIANTS, validate_max=True
)
PromptFormSet = forms.formset_factory(
    PromptForm, extra=1, max_num=MAX_EXPERIMENT_VARIANTS, absolute_max=MAX_EXPERIMENT_VARIANTS, validate_max=True
)


def _structured(text: str) -> Any:
    """JSON or YAML text as data; a field error when it is neither."""
    try:
        return safe_yaml.load(text)
    except yaml.YAMLError as exc:
        raise forms.ValidationError(f"Not valid JSON or YAML: {exc}") from None


# The structured-output block's `mode` (compare/experiments/spec.py StructuredOutput).
STRUCTURED_MODES = {
    "native": "sent to the model (native)",
    "validate": "only checked (validate)",
}

UNCERTAINTY = [
    ("", "(default: unknown)"),
    ("unknown", "unknown: answer UNKNOWN"),
    ("target", "target: answer the target category"),
    ("non-target", "non-target: answer the non-target category"),
]


def _text_area(rows: int) -> forms.Textarea:
    return forms.Textarea(attrs={"rows": rows})


class BuildForm(forms.Form):
    """Every section of an experiment file but `$file:` (nothing is read from disk); parameter sets and prompts come
    in their formsets. The file's own checks then apply, so the form and the file refuse the same things."""

    tool_choices = TOOL_CHOICES  # offered beside the tool choice's text, which may also name a tool
    name = forms.CharField(label="Title", max_length=200)
    description = forms.CharField(label="Description (optional)", required=False, widget=_text_area(2))
    models = forms.MultipleChoiceField(label="Models", required=False, widget=forms.CheckboxSelectMultiple)
    other_models = forms.CharField(label="Other model ids (one per line)", required=False, widget=_text_area(2))
    system_prompt = forms.CharField(label="System prompt (optional)", required=False, widget=_text_area(2))
    variables = forms.CharField(
        label="Variables every row gets (YAML or JSON mapping, optional)", required=False, widget=_text_area(2)
    )
    dataset = forms.ModelChoiceField(
        label="A dataset of this workspace", required=False, queryset=Dataset.objects.none()
    )
    rows = forms.CharField(
        label="…or rows, as YAML or JSON: a list of {name, vars, assertions (optional)}",
        required=False,
        widget=_text_area(5),
    )
    evaluation_type = forms.ChoiceField(label="Judge the answers", required=False)
    judge = forms.CharField(label="Judge model", required=False, max_length=300)
    family = forms.ChoiceField(
        label="A judge of a candidate's model family",
        choices=[("warn", "runs, with a warning"), ("refuse", "is refused")],
        initial="warn",
        required=False,
    )
    evaluator_prompt = forms.CharField(
        label="Custom evaluator prompt (scored types, optional)", required=False, widget=_text_area(4)
    )
    criteria = forms.CharField(label="Criteria: what the judge classifies", required=False, widget=_text_area(2))
    target = forms.CharField(label="Target category (binary)", required=False, max_length=200)
    non_target = forms.CharField(label="Non-target category (binary)", required=False, max_length=200)
    uncertainty = forms.ChoiceField(label="An uncertain judge answers", choices=UNCERTAINTY, required=False)
    categories = forms.CharField(
        label="Categories (multiclass): one a line, name: description", required=False, widget=_text_area(3)
    )
    input_columns = forms.CharField(
        label="Input columns shown to the judge (dataset variables, comma-separated)", required=False, max_length=2000
    )
    include_reasoning = forms.BooleanField(label="The judge gives its reasoning", required=False, initial=True)
    include_score = forms.BooleanField(label="The judge gives a confidence score", required=False)
    schema = forms.CharField(
        label="Structured output: JSON schema of an answer (optional)", required=False, widget=_text_area(4)
    )
    output_format = forms.ChoiceField(label="Shown to the judge as", choices=[(f, f) for f in STRUCTURED_FORMATS])
    output_mode = forms.ChoiceField(
        label="The schema is",
        choices=[(m, label) for m, label in STRUCTURED_MODES.items()],
        initial="native",
        required=False,
    )
    tools = forms.CharField(
        label="Tools every model is offered (YAML or JSON: a list in OpenAI's function format; optional)",
        required=False,
        widget=forms.Textarea(
            attrs={
                "rows": 3,
                "placeholder": '[{"type": "function", "function": {"name": "lookup", "parameters": {…}}}]',
                "spellcheck": "false",
            }
        ),
    )
    tool_choice = forms.CharField(
        label="Tool choice (auto, none, required or a tool's name; optional)",
        required=False,
        max_length=64,
        widget=forms.TextInput(attrs={"list": "tool-choices", "autocomplete": "off"}),
    )
    assertions = forms.CharField(
        label="Assertions every answer is checked against (YAML or JSON: a list of {type, value}; optional)",
        required=False,
        widget=forms.Textarea(
            attrs={"rows": 3, "placeholder": '[{"type": "contains", "value": "<<topic>>"}]', "spellcheck": "false"}
        ),
        help_text="promptfoo-style checks: contains, equals, regex, is-json, cost, latency, their not- forms "
        "(docs/assertions.md). A row of the rows box may carry its own under assertions.",
    )
    combinations = forms.CharField(
        label="Combinations instead of every one (YAML or JSON: a list of {model, model-parameters, prompt}; optional)",
        required=False,
        widget=_text_area(2),
    )
    timeout = forms.FloatField(label="Seconds an answer may take", required=False, min_value=1, max_value=MAX_TIMEOUT_S)
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
        self.classification_types = tuple(judging.classification_types) if judging else ()
        self.fields["evaluation_type"].choices = [("", "No judge"), *((t, t) for t in types)]

    def clean_variables(self) -> Any:
        text = self.cleaned_data["variables"]
        return _structured(text) if text.strip() else None

    def clean_rows(self) -> Any:
        text = self.cleaned_data["rows"]
        return _structured(text) if text.strip() else None

    def clean_schema(self) -> Any:
        text = self.cleaned_data["schema"]
        return _structured(text) if text.strip() else None

    def clean_tools(self) -> Any:
        text = self.cleaned_data["tools"]
        return _structured(text) if text.strip() else None

    def clean_assertions(self) -> Any:
        text = self.cleaned_data["assertions"]
        return _structured(text) if text.strip() else None

    def clean_combinations(self) -> Any:
        text = self.cleaned_data["combinations"]
        return _structured(text) if text.strip() else None

    def clean_categories(self) -> dict[str, str] | None:
        """`name: description` lines → the file's mapping form of categories."""
        categories: dict[str, str] = {}
        for line in self.cleaned_data["categories"].splitlines():
            name, _, description = line.partition(":")
            if name.strip():
                categories[name.strip()] = description.strip()
        return categories or None

    def clean_input_columns(self) -> list[str]:
        return [c for c in self.cleaned_data["input_columns"].replace(",", " ").split() if c]

    def _evaluation(self) -> dict[str, Any]:
        data = self.cleaned_data
        evaluation: dict[str, Any] = {"type": data["evaluation_type"], "model": data["judge"]}
        if data["family"] and data["family"] in FAMILY_RULES and data["family"] != "warn":
            evaluation["family"] = data["family"]
        if data["evaluation_type"] not in self.classification_types:
            if data["evaluator_prompt"].strip():
                evaluation["prompt"] = data["evaluator_prompt"]
            return evaluation
        evaluation["criteria"] = data["criteria"]
        for key, field in (("target", "target"), ("non-target", "non_target"), ("uncertainty", "uncertainty")):
            if data[field].strip():
                evaluation[key] = data[field].strip()
        if data["categories"] is not None:
            evaluation["categories"] = data["categories"]
        if data["input_columns"]:
            evaluation["input-columns"] = data["input_columns"]
        evaluation["include-reasoning"] = data["include_reasoning"]
        evaluation["include-score"] = data["include_score"]
        return evaluation

    def config_data(self, param_sets: list[dict], prompts: list[dict]) -> dict[str, Any]:
        """The experiment file this form describes (checked afterwards like any file)."""
        data = self.cleaned_data
        others = [line.strip() for line in data["other_models"].splitlines() if line.strip()]
        config: dict[str, Any] = {
            "name": data["name"],
            "models": [{"model": model} for model in [*data["models"], *others]],
            "prompts": prompts,
        }
        if data["description"].strip():
            config["description"] = data["description"]
        if param_sets:
            config["model-parameters"] = param_sets
        if data["system_prompt"].strip():
            config["system-prompt"] = data["system_prompt"]
        if data["variables"] is not None:
            config["variables"] = data["variables"]
        if data["dataset"] is not None:
            config["dataset"] = [{"dataset": data["dataset"].pk}]
        elif data["rows"] is not None:
            config["dataset"] = data["rows"]
        if data["evaluation_type"]:
            config["evaluation"] = self._evaluation()
        if data["schema"] is not None:
            config["structured-output"] = {"schema": data["schema"], "format": data["output_format"]}
            if data["output_mode"] and data["output_mode"] != "native":
                config["structured-output"]["mode"] = data["output_mode"]
        if data["tools"] is not None:
            config["tools"] = data["tools"]
        if data["tool_choice"].strip():
            config["tool-choice"] = data["tool_choice"].strip()
        if data["assertions"] is not None:
            config["assertions"] = data["assertions"]
        if data["combinations"] is not None:
            config["combinations"] = data["combinations"]
        if data["timeout"] is not None:
            config["timeout"] = data["timeout"]
        if data["cache"]:
            config["cache"] = True
        return config


def filled(formset: forms.BaseFormSet) -> tuple[list[dict[str, Any]], list[forms.Form]]:
    """The formset's rows that say something, without empty fields, and the forms they came from (in the same
    order: the file's `prompts[2]` is the second form that says something, whatever its place in the page)."""
    rows, sources = [], []
    for form in formset:
        values = {key: value for key, value in (form.cleaned_data or {}).items() if value not in (None, "")}
        if values:
            rows.append(values)
            sources.append(form)
    return rows, sources
