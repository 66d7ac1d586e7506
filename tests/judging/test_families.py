"""A judge may not share a model family with any candidate; such a configuration is refused with the reason."""

import pytest
from django.core.exceptions import ValidationError

from compare.models import Round
from judging.families import model_family
from judging.models import GroupJudge, Verdict, VerdictStatus
from judging.services import group_judge_set, verdict_for_finished_round, verdict_request
from judging.verdicts import verdict_execute
from lab.services import connection_create
from tests.fixtures.judging_factories import KEY, answered_round, judged_group, make_judge


@pytest.mark.parametrize(
    ("kind", "model", "family"),
    [
        ("openrouter", "openai/gpt-4o", "openai"),
        ("openrouter", "anthropic/claude-haiku-4.5", "anthropic"),
        ("openrouter", "meta-llama/llama-3.1-8b-instruct", "meta-llama"),
        ("openai", "gpt-4.1-mini", "openai"),
        ("openai", "o3", "openai"),
        ("anthropic", "claude-sonnet-4-5", "anthropic"),
        ("gemini", "gemini-2.5-flash", "google"),
        ("openrouter", "google/gemini-2.5-pro", "google"),
        ("openai_compatible", "llama3.2", "llama3.2"),
        ("openai_compatible", "llama3.2:8b", "llama3.2"),
        ("openai_compatible", "Qwen2.5", "qwen2.5"),
    ],
)
def test_the_family_follows_the_rule_of_each_connection_kind(kind, model, family):
    assert model_family(kind, model) == family


@pytest.fixture
def openrouter(workspace, fake_llm):
    return connection_create(
        workspace=workspace, name="router", kind="openrouter", base_url=fake_llm.openai_url, api_key=KEY
    )


@pytest.fixture
def same_family_judge(workspace, owner, fake_llm, connections, openrouter):
    """The candidates run on direct OpenAI; this judge is an OpenAI model through OpenRouter."""
    from judging.services import judge_config_create

    return judge_config_create(workspace=workspace, user=owner, name="GPT judge", model="router::openai/gpt-4o")


def test_naming_a_same_family_judge_for_a_comparison_is_refused_with_the_reason(workspace, owner, same_family_judge):
    group = judged_group(workspace, owner, count=2, labels=["Short", "Long"])

    with pytest.raises(ValidationError) as refused:
        group_judge_set(group=group, judge=same_family_judge)

    [first, second, override] = refused.value.message_dict["judge"]
    assert "router::openai/gpt-4o and Variant 1 (Short), cands::gpt-4.1-mini, are both openai models" in first
    assert "may not grade its own family" in first and "Variant 2 (Long)" in second
    assert "allow_same_family" in override


def test_judging_a_round_with_a_same_family_judge_is_refused(workspace, owner, same_family_judge):
    round_ = answered_round(judged_group(workspace, owner, count=2), owner, ["one", "two"])

    with pytest.raises(ValidationError, match="are both openai models"):
        verdict_request(round=round_, user=owner, judge=same_family_judge)
    assert not Verdict.objects.exists()


def test_a_judge_of_another_family_is_accepted(workspace, owner, fake_llm, connections):
    group = judged_group(workspace, owner, count=2)
    judge, _ = make_judge(workspace, owner, fake_llm)

    assert group_judge_set(group=group, judge=judge).judge == judge


def test_a_comparison_that_gained_a_same_family_judge_records_why_its_round_was_not_judged(
    workspace, owner, same_family_judge
):
    group = judged_group(workspace, owner, count=2)
    round_ = answered_round(group, owner, ["one", "two"])
    # The rule was checked when the judge was named; a judge whose model changed since is caught here.
    GroupJudge.objects.create(group=group, judge=same_family_judge)

    verdict = verdict_for_finished_round(round_id=round_.pk)

    assert verdict.status == VerdictStatus.FAILED and "are both openai models" in verdict.error
    assert Round.objects.get(pk=round_.pk).verdicts.count() == 1


def test_an_explicit_override_lets_a_same_family_judge_grade_and_is_recorded(
    workspace, owner, fake_llm, same_family_judge, api
):
    group = judged_group(workspace, owner, count=2)
    url = f"/api/v1/groups/{group.pk}/judge/"
    refused = api.put(url, {"judge": same_family_judge.pk}, format="json")
    assert refused.status_code == 400 and "are both openai models" in str(refused.json())

    allowed = api.put(url, {"judge": same_family_judge.pk, "allow_same_family": True}, format="json")

    assert allowed.status_code == 200, allowed.json()
    link = GroupJudge.objects.get(group=group)
    assert link.family_override_by == owner and link.family_override_at is not None
    round_ = answered_round(group, owner, ["one on tea", "two on tea"])
    verdict = verdict_execute(verdict_id=verdict_request(round=round_, user=owner).pk)
    assert verdict.status == VerdictStatus.DONE
    [asked] = [body["messages"][1]["content"] for body in fake_llm.requests("openai/gpt-4o")][-1:]
    assert "one on tea" in asked and "two on tea" in asked
