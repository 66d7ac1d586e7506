"""Inputs of the judging pages; they only shape input, the services decide what is valid."""

from django import forms

from .classification import JudgeKind, Uncertainty
from .rubric import MAX_METRICS, ConversationScope, JudgeMode, Scale
from .services import MAX_SEED


class JudgeForm(forms.Form):
    name = forms.CharField(max_length=120)
    model = forms.CharField(
        label="Judge model",
        max_length=300,
        help_text="<connection>::<model>, from another family than the models it will grade.",
        widget=forms.TextInput(attrs={"list": "judge-models", "autocomplete": "off"}),
    )
    scale = forms.ChoiceField(choices=Scale.choices, initial=Scale.ONE_TO_FIVE)
    mode = forms.ChoiceField(choices=JudgeMode.choices, initial=JudgeMode.RELATIVE)
    prompt = forms.CharField(
        label="Custom evaluator prompt",
        required=False,
        strip=False,
        widget=forms.Textarea(attrs={"rows": 8}),
        help_text="Optional. Must contain {{prompt}} and {{response}}; on a scale other than binary also "
        "{{scoring_scale}} and {{metrics}}. The reply format is always added after it.",
    )
    seed = forms.IntegerField(
        required=False,
        min_value=0,
        max_value=MAX_SEED - 1,
        help_text="Optional: fixes the letters and orders, to reproduce verdicts. Empty: fresh each time.",
    )
    lenient_replies = forms.BooleanField(
        label="Lenient replies",
        required=False,
        help_text="Read the largest JSON object in a reply, ignoring text around it. Off: replies must be JSON.",
    )
    conversation = forms.ChoiceField(
        choices=ConversationScope.choices,
        initial=ConversationScope.LAST_TURN,
        label="In a conversation, judge",
        required=False,
        help_text="A later turn of a conversation: its last answers, or each column's whole conversation.",
    )
    kind = forms.ChoiceField(choices=JudgeKind.choices, initial=JudgeKind.RUBRIC, label="Kind", required=False)
    # A classification judge's settings (Evidently's binary and multiclass templates); rendered in their own section.
    criteria = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 3}),
        help_text="What the judge classifies, e.g. “Is the answer concise?”; may use {{column}} of the input columns.",
    )
    target = forms.CharField(required=False, max_length=60, label="Target category", help_text="Binary: e.g. concise")
    non_target = forms.CharField(
        required=False, max_length=60, label="Non-target category", help_text="Binary: e.g. verbose"
    )
    categories = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text="Multiclass: one category a line, “name: description”.",
    )
    uncertainty = forms.ChoiceField(
        choices=Uncertainty.choices,
        initial=Uncertainty.UNKNOWN,
        required=False,
        help_text="What an uncertain judge answers.",
    )
    include_reasoning = forms.BooleanField(required=False, initial=True, label="Ask for its reasoning")
    include_score = forms.BooleanField(required=False, label="Ask for a score (its confidence, 0–1)")
    input_columns = forms.CharField(
        required=False, help_text="Dataset columns shown to the judge, separated by commas, e.g. question, audience."
    )

    classification_fields = (
        "criteria",
        "target",
        "non_target",
        "categories",
        "uncertainty",
        "include_reasoning",
        "include_score",
        "input_columns",
    )

    # The kinds each field is for; the editor's script shows only the chosen kind's (every field is still sent and
    # the services check what the kind needs, so the form works the same without the script).
    field_kinds = {
        "scale": JudgeKind.RUBRIC,
        "mode": JudgeKind.RUBRIC,
        **dict.fromkeys(classification_fields, f"{JudgeKind.BINARY} {JudgeKind.MULTICLASS}"),
        "target": JudgeKind.BINARY,
        "non_target": JudgeKind.BINARY,
        "categories": JudgeKind.MULTICLASS,
    }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        for name, kinds in self.field_kinds.items():
            self.fields[name].widget.attrs["data-kinds"] = str(kinds)

    def service_fields(self) -> dict:
        """The cleaned data as judge_config_create takes it: a classifier's settings gathered in `classification`."""
        data = dict(self.cleaned_data)
        settings = {name: data.pop(name) for name in self.classification_fields}
        columns = [c.strip() for c in settings.pop("input_columns").split(",") if c.strip()]
        lines = [line.partition(":") for line in settings.pop("categories").splitlines() if line.strip()]
        settings["categories"] = [{"name": name.strip(), "description": rest.strip()} for name, _, rest in lines]
        settings["uncertainty"] = settings["uncertainty"] or Uncertainty.UNKNOWN
        kind = data.pop("kind") or JudgeKind.RUBRIC
        data["conversation"] = data.get("conversation") or ConversationScope.LAST_TURN
        return {**data, "kind": kind, "classification": settings, "input_columns": columns}

    @staticmethod
    def initial_of(judge) -> dict:
        settings = judge.classification or {}
        categories = "\n".join(f"{c['name']}: {c.get('description', '')}" for c in settings.get("categories", []))
        return {
            "kind": judge.kind,
            **{
                name: settings[name] for name in ("criteria", "target", "non_target", "uncertainty") if name in settings
            },
            "include_reasoning": settings.get("include_reasoning", True),
            "include_score": settings.get("include_score", False),
            "categories": categories,
            "input_columns": ", ".join(judge.input_columns or []),
        }


class MetricForm(forms.Form):
    name = forms.CharField(max_length=60)
    weight = forms.FloatField(min_value=0, max_value=100, initial=1)
    low = forms.CharField(label="Lowest score looks like", max_length=500)
    high = forms.CharField(label="Highest score looks like", max_length=500)


MetricFormSet = forms.formset_factory(
    MetricForm, extra=0, can_delete=True, max_num=MAX_METRICS, absolute_max=MAX_METRICS
)


class RoundJudgeForm(forms.Form):
    judge = forms.IntegerField(required=False)
    # The family rule's override, as the API's allow_same_family: it names the judge as the comparison's, recorded.
    allow_same_family = forms.BooleanField(required=False)
