"""Creating a comparison: 2–5 variants, the mode's rules, models of this workspace, and errors naming the variant."""

import pytest
from django.core.exceptions import ValidationError
from django.db import IntegrityError

from compare import services
from compare.datasets.services import dataset_create
from compare.models import Mode, Output, Round, Variant
from lab.services import connection_create
from tests.fixtures.compare_factories import INSTANT, make_group, start_round


def variants(count: int, model: str = INSTANT, prompt: str = "Hello {{topic}}") -> list[dict]:
    return [{"label": f"V{i}", "model": model, "prompt": f"{prompt} #{i}"} for i in range(1, count + 1)]


def create(workspace, owner, **fields):
    fields.setdefault("mode", Mode.PROMPTS)
    fields.setdefault("shared_variables", {"topic": "tea"})
    return services.group_create(workspace=workspace, user=owner, **fields)


def errors_creating(workspace, owner, **fields) -> dict:
    """The errors, by field, of a comparison that the service refuses to create."""
    with pytest.raises(ValidationError) as excinfo:
        create(workspace, owner, **fields)
    return excinfo.value.message_dict


@pytest.mark.django_db
def test_it_creates_a_group_with_its_variants_in_order(workspace, owner):
    group = create(workspace, owner, title="Tone", variants=variants(3))
    assert group.title == "Tone"
    assert [(v.position, v.label) for v in group.variants.all()] == [(1, "V1"), (2, "V2"), (3, "V3")]
    assert (group.stagger_ms, group.timeout_s()) == (50, 120.0)  # reasoning models often think for over a minute


@pytest.mark.django_db
def test_labels_default_to_letters(workspace, owner):
    group = create(
        workspace, owner, variants=[{"model": INSTANT, "prompt": "a {{topic}}"}, {"model": INSTANT, "prompt": "b"}]
    )
    assert [v.label for v in group.variants.all()] == ["A", "B"]


@pytest.mark.django_db
def test_it_rejects_a_sixth_variant(workspace, owner):
    errors = errors_creating(workspace, owner, variants=variants(6))
    assert errors["variants"] == ["A comparison has 2 to 5 variants; this has 6."]


@pytest.mark.django_db
def test_it_rejects_a_comparison_of_one(workspace, owner):
    errors = errors_creating(workspace, owner, variants=variants(1))
    assert "2 to 5 variants" in errors["variants"][0]


@pytest.mark.django_db
def test_an_experiment_in_custom_mode_may_have_more_than_five_variants(workspace, owner):
    group = create(workspace, owner, mode=Mode.CUSTOM, variants=variants(8))
    assert group.variants.count() == 8


@pytest.mark.django_db
def test_a_prompts_comparison_runs_every_variant_on_one_model(workspace, owner):
    mixed = variants(3)
    mixed[2]["model"] = "simulated::writer"
    errors = errors_creating(workspace, owner, variants=mixed)
    [message] = errors["variants"]
    assert message.startswith("Variant 3 (V3): model: a prompts comparison runs every variant on one model")


@pytest.mark.django_db
def test_a_models_comparison_sends_every_model_the_same_prompt(workspace, owner):
    models = [
        {"label": "A", "model": INSTANT, "prompt": "Same"},
        {"label": "B", "model": "simulated::writer", "prompt": "Other"},
    ]
    errors = errors_creating(workspace, owner, mode=Mode.MODELS, variants=models)
    assert errors["variants"][0].startswith("Variant 2 (B): prompt: a models comparison")


@pytest.mark.django_db
def test_a_model_of_a_connection_this_workspace_lacks_is_rejected_naming_the_variant(workspace, owner):
    bad = variants(2)
    bad[1]["model"] = "openai::gpt-4.1-mini"
    errors = errors_creating(workspace, owner, mode=Mode.CUSTOM, variants=bad)
    [message] = errors["variants"]
    assert message.startswith("Variant 2 (V2): model: This workspace has no connection named “openai”")


@pytest.mark.django_db
def test_a_malformed_model_id_and_an_unknown_simulated_model_are_rejected(workspace, owner):
    bad = variants(3)
    bad[0]["model"] = "gpt-4"
    bad[1]["model"] = "simulated::nonesuch"
    errors = errors_creating(workspace, owner, mode=Mode.CUSTOM, variants=bad)
    first, second = errors["variants"]
    assert first.startswith("Variant 1 (V1): model: “gpt-4” is not a model id")
    assert second.startswith("Variant 2 (V2): model:") and "nonesuch" in second


@pytest.mark.django_db
def test_a_missing_variable_is_rejected_naming_the_variant_and_the_variable(workspace, owner):
    two = variants(2)
    two[1]["prompt"] = "Hello {{topic}} and {{reader}}"
    errors = errors_creating(workspace, owner, variants=two)
    [message] = errors["variants"]
    assert message.startswith("Variant 2 (V2) uses {{reader}}, which has no value")


@pytest.mark.django_db
def test_a_variable_that_every_dataset_row_provides_is_not_missing(workspace, owner):
    dataset = dataset_create(
        workspace=workspace, user=owner, name="Q", rows=[{"vars": {"reader": "kids"}}, {"vars": {"reader": "cooks"}}]
    )
    two = variants(2, prompt="{{topic}} for {{reader}}")
    group = create(workspace, owner, variants=two, dataset=dataset)
    assert group.dataset == dataset


@pytest.mark.django_db
def test_per_variant_parameters_are_only_for_custom_mode(workspace, owner):
    two = variants(2)
    two[0]["params"] = {"temperature": 0.2}
    errors = errors_creating(workspace, owner, variants=two)
    assert errors["variants"][0].startswith("Variant 1 (V1): params: per-variant parameters")
    group = create(workspace, owner, mode=Mode.CUSTOM, variants=two)
    assert group.variants.get(position=1).params == {"temperature": 0.2}


@pytest.mark.django_db
def test_a_parameter_a_chosen_model_refuses_is_rejected_naming_the_model(workspace, owner):
    connection_create(workspace=workspace, name="local", kind="openai_compatible", base_url="http://127.0.0.1:9/v1")
    models = [
        {"label": "Reasoner", "model": "local::o3-mini", "prompt": "Hi"},
        {"label": "Sim", "model": INSTANT, "prompt": "Hi"},
    ]
    errors = errors_creating(workspace, owner, mode=Mode.MODELS, variants=models, params={"temperature": 0.5})
    [message] = errors["params"]
    assert "Variant 1 (Reasoner)" in message and "local::o3-mini does not support temperature" in message


@pytest.mark.django_db
def test_unset_parameters_are_not_stored(workspace, owner):
    group = create(workspace, owner, variants=variants(2), params={"temperature": 0.3, "top_p": None, "stop": []})
    assert group.params == {"temperature": 0.3}


@pytest.mark.django_db
def test_timeouts_that_could_outlast_the_workers_time_limit_are_rejected(workspace, owner):
    # 270 s fits the 300 s limit less its 30 s margin, but not with the fifth variant starting 4 × 50 ms later.
    errors = errors_creating(workspace, owner, variants=variants(5), timeout_ms=270_000)
    assert "a round must end within" in errors["timeout_ms"][0]


@pytest.mark.django_db
def test_duplicate_labels_are_rejected(workspace, owner):
    two = variants(2)
    two[1]["label"] = "V1"
    errors = errors_creating(workspace, owner, variants=two)
    assert errors["variants"] == ["Variant 2 (V1): label: variant 1 already uses this label."]


@pytest.mark.django_db
def test_the_database_keeps_variant_positions_unique_in_a_group(group):
    with pytest.raises(IntegrityError):
        Variant.objects.create(group=group, position=1, label="Z", model=INSTANT, prompt="x")


@pytest.mark.django_db
def test_the_database_keeps_round_numbers_unique_in_a_group(group, owner):
    start_round(group, owner)
    with pytest.raises(IntegrityError):
        Round.objects.create(group=group, number=1)


@pytest.mark.django_db
def test_the_database_keeps_one_output_per_round_and_variant(group, owner):
    round_ = start_round(group, owner)
    with pytest.raises(IntegrityError):
        Output.objects.create(round=round_, variant=group.variants.first())


@pytest.mark.django_db
def test_the_database_refuses_an_unknown_status(group, owner):
    round_ = start_round(group, owner)
    with pytest.raises(IntegrityError):
        Round.objects.filter(pk=round_.pk).update(status="paused")


@pytest.mark.django_db
def test_clone_copies_settings_and_variants_and_can_copy_a_variant_for_its_next_version(workspace, owner):
    group = make_group(workspace, owner, prompts=["One {{topic}}", "Two {{topic}}"], blind=True, stagger_ms=80)
    clone = services.group_clone(group=group, user=owner, copy_variant=2)
    assert (clone.title, clone.blind, clone.stagger_ms, clone.cloned_from) == (f"{group.title} (copy)", True, 80, group)
    assert [(v.label, v.prompt) for v in clone.variants.all()] == [
        ("A", "One {{topic}}"),
        ("B", "Two {{topic}}"),
        ("B v2", "Two {{topic}}"),
    ]


@pytest.mark.django_db
def test_an_unknown_parameter_is_rejected_not_dropped(workspace, owner):
    errors = errors_creating(workspace, owner, variants=variants(2), params={"temprature": 0.2})
    assert errors["params"][0].startswith("unknown parameters temprature; known: temperature")
