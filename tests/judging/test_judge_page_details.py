"""The judge pages say what a judge does: a pairwise judge shows no scale, and the round's judge form carries the
same-family override the API has (recorded on the comparison)."""

import pytest

from judging.models import GroupJudge, Verdict
from judging.services import judge_config_create
from tests.fixtures.judging_factories import answered_round, judged_group, make_judge

pytestmark = pytest.mark.django_db


@pytest.fixture
def logged_in(client, owner):
    client.force_login(owner)
    return client


def test_a_pairwise_judge_says_what_it_does_instead_of_a_scale(logged_in, owner, workspace, fake_llm, connections):
    judge, _ = make_judge(workspace, owner, fake_llm, mode="pairwise", scale="1-10")
    round_ = answered_round(judged_group(workspace, owner, count=2), owner, ["a", "b"])
    Verdict.objects.create(
        round=round_, judge=judge, judge_name="Pairs", judge_model=judge.model, scale="1-10", mode="pairwise"
    )

    detail = logged_in.get(f"/judges/{judge.pk}/").content.decode()
    panel = logged_in.get(f"/judging/rounds/{round_.pk}/verdict/").content.decode()

    for html in (detail, panel):
        assert "better of each two answers, asked in both orders" in html
        assert "scale 1" not in html


def test_the_round_form_overrides_the_family_rule_and_records_it(logged_in, owner, workspace, connections):
    same_family = judge_config_create(workspace=workspace, user=owner, name="Same", model="cands::gpt-4o")
    round_ = answered_round(judged_group(workspace, owner, count=2), owner, ["a", "b"])
    url = f"/judging/rounds/{round_.pk}/judge/"

    refused = logged_in.post(url, {"judge": same_family.pk})
    assert refused.status_code == 400 and "Judge even if it shares a family" in refused.content.decode()

    allowed = logged_in.post(url, {"judge": same_family.pk, "allow_same_family": "1"})
    assert allowed.status_code == 200
    link = GroupJudge.objects.get(group=round_.group)
    assert link.judge == same_family and link.family_override_by == owner and link.family_override_at is not None
    assert Verdict.objects.filter(round=round_, judge=same_family).exists()
