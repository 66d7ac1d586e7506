"""The inbox and voters pages: the rule in one sentence, the report's "more votes" links to the filtered inbox,
owners see flags and exclude voters from the page."""

import pytest

from lab.models import Role
from tests.fixtures.factories import add_member
from tests.fixtures.voting_factories import finished_round, voting_group
from voting.inbox.rule import RULE_SENTENCE
from voting.models import VoterExclusion
from voting.services import vote_cast

pytestmark = pytest.mark.django_db


@pytest.fixture
def browser_client(client, owner):
    client.force_login(owner)
    return client


def test_the_inbox_page_explains_its_rule_and_keeps_its_filters(browser_client, workspace, owner):
    group = voting_group(workspace, owner, title="Greetings")
    page = browser_client.get(f"/w/{workspace.pk}/inbox/?group={group.pk}&blind=false").content.decode()
    assert RULE_SENTENCE.replace("'", "&#x27;") in page
    assert f'data-filters="group={group.pk}&"' in page and 'data-blind="false"' in page
    assert f'<option value="{group.pk}" selected>Greetings</option>' in page


def test_a_bad_filter_is_shown_and_the_inbox_stays_unfiltered(browser_client, workspace):
    page = browser_client.get(f"/w/{workspace.pk}/inbox/?group=999999").content.decode()
    assert "No such comparison in this workspace." in page and 'data-filters=""' in page


def test_the_reports_more_votes_needed_links_to_the_inbox_for_that_comparison(browser_client, workspace, owner):
    group = voting_group(workspace, owner, n=2)
    round_ = finished_round(group, owner)
    vote_cast(round=round_, user=owner, output_id=round_.outputs.order_by("variant__position")[0].pk)
    page = browser_client.get(f"/compare/{group.pk}/report/").content.decode()
    link = f'href="/w/{workspace.pk}/inbox/?group={group.pk}"'
    assert f'<a class="muted more-votes" {link}' in page
    assert "about 9 more decisive votes</a>" in page


def test_owners_see_flags_and_exclude_from_the_page(browser_client, client, workspace, owner):
    vera = add_member(workspace, "vera", Role.VIEWER)
    round_ = finished_round(voting_group(workspace, owner), owner)
    vote_cast(round=round_, user=vera, verdict="tie")
    page = browser_client.get(f"/w/{workspace.pk}/voters/").content.decode()
    assert "vera" in page and "Exclude from the statistics" in page
    browser_client.post(f"/w/{workspace.pk}/voters/{vera.pk}/exclude/", {"reason": "test votes"})
    assert VoterExclusion.objects.get(workspace=workspace, user=vera).reason == "test votes"
    assert "excluded: test votes" in browser_client.get(f"/w/{workspace.pk}/voters/").content.decode()


def test_other_members_see_only_their_own_figures_and_cannot_exclude(client, workspace, owner):
    vera = add_member(workspace, "vera", Role.VIEWER)
    round_ = finished_round(voting_group(workspace, owner), owner)
    vote_cast(round=round_, user=owner, verdict="tie")
    vote_cast(round=round_, user=vera, verdict="tie")
    client.force_login(vera)
    page = client.get(f"/w/{workspace.pk}/voters/").content.decode()
    assert f'id="voter-title-{vera.pk}"' in page and f'id="voter-title-{owner.pk}"' not in page
    assert client.post(f"/w/{workspace.pk}/voters/{owner.pk}/exclude/", {"reason": "x"}).status_code == 403


def test_an_exclusion_reason_the_database_cannot_store_is_refused_on_the_page(client, workspace, owner):
    vera = add_member(workspace, "vera", Role.VIEWER)
    client.force_login(owner)
    url = f"/w/{workspace.pk}/voters/{vera.pk}/exclude/"
    for reason, message in [("x" * 301, "at most 300 characters"), ("fast\x00clicks", "NUL character")]:
        response = client.post(url, {"reason": reason}, follow=True)

        assert response.status_code == 200
        assert message in response.content.decode()
    assert not VoterExclusion.objects.filter(workspace=workspace).exists()
