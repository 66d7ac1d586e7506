"""Inputs of the judging pages; they only shape input, the services decide what is valid."""

from django import forms

from .rubric import MAX_METRICS, JudgeMode, Scale
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
