"""The history page (a workspace's home): every comparison with its figures, search, filters, pages, speed."""

from datetime import timedelta

import pytest
from django.utils import timezone

from compare.models import CompareGroup, Mode, Round, Variant
from lab.models import Role
from tests.fixtures.compare_factories import INSTANT, make_group
from tests.fixtures.factories import add_member
from tests.fixtures.voting_factories import finished_round, voting_group
from voting.services import vote_cast

pytestmark = pytest.mark.django_db


@pytest.fixture
def page(client, owner):
    client.force_login(owner)

    def get(workspace, **params):
        response = client.get(f"/w/{workspace.pk}/", params)
        assert response.status_code == 200, response.content[:500]
        return response

    return get


def titles(response) -> list[str]:
    return [group.title for group in response.context["page"].object_list]


def test_the_workspace_home_lists_comparisons_with_models_rounds_votes_leader_and_author(page, workspace, owner):
    group = voting_group(workspace, owner, n=3, title="Tone check")
    first, second = finished_round(group, owner), finished_round(group, owner)
    colleague = add_member(workspace, "colleague", Role.VIEWER)
    winner = first.outputs.get(variant__position=2)
    vote_cast(round=first, user=owner, output_id=winner.pk)
    vote_cast(round=first, user=colleague, output_id=winner.pk)
    vote_cast(round=second, user=owner, verdict="tie")
    make_group(workspace, owner, title="Other", models=(INSTANT, "simulated::writer"))

    response = page(workspace)
    html = response.content.decode()
    assert titles(response) == ["Other", "Tone check"]
    row = response.context["page"].object_list[1]
    assert (row.round_count, row.vote_count, row.leader_label, row.leader_wins) == (2, 3, "B", 2)
    assert "simulated::writer" in html and "simulated</span>" in html
    assert "Prompt versions" in html and "Models" in html
    assert "owner" in html and "2 wins" in html


def test_a_tie_for_the_lead_is_called_a_tie(page, workspace, owner):
    group = voting_group(workspace, owner, n=2)
    round_ = finished_round(group, owner)
    colleague = add_member(workspace, "colleague", Role.VIEWER)
    a, b = round_.outputs.order_by("variant__position")
    vote_cast(round=round_, user=owner, output_id=a.pk)
    vote_cast(round=round_, user=colleague, output_id=b.pk)
    assert "tied at 1 win" in page(workspace).content.decode()


def test_search_finds_text_in_titles_prompts_labels_and_models(page, workspace, owner):
    make_group(workspace, owner, title="Refund policy")
    make_group(workspace, owner, title="Greeting", prompts=["Say hello to {{topic}} like a pirate."] * 2)
    make_group(workspace, owner, title="Speed", models=(INSTANT, "simulated::coder"))
    assert titles(page(workspace, q="refund")) == ["Refund policy"]
    assert titles(page(workspace, q="PIRATE")) == ["Greeting"]
    assert titles(page(workspace, q="coder")) == ["Speed"]
    assert titles(page(workspace, q="nothing like this")) == []


def test_filters_by_mode_model_author_and_dates(page, workspace, owner):
    colleague = add_member(workspace, "colleague", Role.EDITOR)
    prompts = make_group(workspace, owner, title="Prompts", prompts=["one {{topic}}", "two {{topic}}"])
    models = make_group(workspace, colleague, title="Models", models=(INSTANT, "simulated::writer"))
    CompareGroup.objects.filter(pk=prompts.pk).update(created_at=timezone.now() - timedelta(days=10))

    assert titles(page(workspace, mode=Mode.PROMPTS)) == ["Prompts"]
    assert titles(page(workspace, model="simulated::writer")) == ["Models"]
    assert titles(page(workspace, author=colleague.pk)) == ["Models"]
    today = timezone.localdate()
    assert titles(page(workspace, date_from=today.isoformat())) == ["Models"]
    assert titles(page(workspace, date_to=(today - timedelta(days=5)).isoformat())) == ["Prompts"]
    assert titles(page(workspace, mode=Mode.MODELS, author=owner.pk)) == []
    assert models.pk  # both exist; the filters chose


def test_an_invalid_filter_is_ignored_and_named(page, workspace, owner):
    make_group(workspace, owner, title="Kept")
    response = page(workspace, date_from="yesterday-ish", mode="nonsense")
    assert titles(response) == ["Kept"]
    assert "From: Enter a valid date. (ignored)" in response.content.decode()


def test_history_pages_by_25_newest_first_keeping_the_filters(page, workspace, owner):
    for n in range(30):
        make_group(workspace, owner, title=f"Group {n:02d}")
    first = page(workspace, q="Group")
    assert len(titles(first)) == 25 and titles(first)[0] == "Group 29"
    assert "?q=Group&amp;page=2" in first.content.decode()
    assert titles(page(workspace, q="Group", page=2)) == [f"Group {n:02d}" for n in range(4, -1, -1)]


def test_thousands_of_comparisons_cost_a_handful_of_queries(page, workspace, owner, django_assert_max_num_queries):
    template = voting_group(workspace, owner, n=3)
    finished_round(template, owner)
    groups = CompareGroup.objects.bulk_create(
        CompareGroup(workspace=workspace, created_by=owner, title=f"Bulk {n}", mode=Mode.PROMPTS) for n in range(3000)
    )
    Variant.objects.bulk_create(
        Variant(group=g, position=p, label=chr(64 + p), model=INSTANT, prompt=f"v{p}")
        for g in groups
        for p in (1, 2, 3)
    )
    Round.objects.bulk_create(Round(group=g, number=1) for g in groups[:1000])
    page(workspace)  # the first visit records the current workspace in the session
    # session, user, membership, workspaces menu, authors, models, simulated connections, count, page, variants
    with django_assert_max_num_queries(10):
        response = page(workspace, q="Bulk", model=INSTANT)
    assert response.context["page"].paginator.count == 3000
    assert len(titles(response)) == 25


def test_another_workspaces_history_is_404(client, stranger, workspace):
    client.force_login(stranger)
    assert client.get(f"/w/{workspace.pk}/").status_code == 404


def test_viewers_see_the_history_without_the_new_comparison_button(client, workspace, owner):
    make_group(workspace, owner, title="Seen")
    viewer = add_member(workspace, "viewer", Role.VIEWER)
    client.force_login(viewer)
    html = client.get(f"/w/{workspace.pk}/").content.decode()
    assert "Seen" in html
    assert f"/w/{workspace.pk}/compare/new/" not in html
