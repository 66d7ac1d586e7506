"""The voting partials of the comparison page: the vote panel of a round and the first report tab."""

import re

import pytest
from django.utils import timezone
from statsmodels.stats.proportion import proportion_confint

from compare.models import OutputStatus, Round, RoundStatus
from lab.models import Role
from tests.fixtures.compare_factories import start_round
from tests.fixtures.factories import add_member
from tests.fixtures.voting_factories import finished_round, voting_group
from voting.services import vote_cast

pytestmark = pytest.mark.django_db


@pytest.fixture
def as_owner(client, owner):
    client.force_login(owner)
    return client


def panel(client, round_) -> str:
    response = client.get(f"/votes/rounds/{round_.pk}/panel/")
    assert response.status_code == 200
    return response.content.decode()


def buttons(html: str) -> list[tuple[str, str, bool]]:
    """(key, label, enabled) of each vote button, in order."""
    found = re.findall(r'<button type="button" class="vote-choice"[^>]*?data-key="(\w)"(.*?)>\s*<kbd>\w</kbd> '
                       r'<span class="vote-label">(.*?)</span>', html, re.S)  # fmt: skip
    return [(key, label, " disabled" not in attrs) for key, attrs, label in found]


def test_the_panel_offers_each_answer_by_key_then_tie_and_all_bad(as_owner, workspace, owner):
    round_ = finished_round(voting_group(workspace, owner, n=3), owner)
    assert buttons(panel(as_owner, round_)) == [
        ("1", "A", True), ("2", "B", True), ("3", "C", True), ("t", "Tie", True), ("b", "All bad", True),
    ]  # fmt: skip


def test_the_panel_shows_my_vote_and_the_tally(as_owner, workspace, owner):
    round_ = finished_round(voting_group(workspace, owner, n=2), owner)
    second = round_.outputs.get(variant__position=2)
    colleague = add_member(workspace, "colleague", Role.VIEWER)
    vote_cast(round=round_, user=owner, output_id=second.pk)
    vote_cast(round=round_, user=colleague, verdict="all_bad")
    html = panel(as_owner, round_)
    assert re.search(rf'data-output="{second.pk}" data-key="2"\s+aria-pressed="true"', html)
    assert f'data-tally="{second.pk}">1<' in html and 'data-tally="all_bad">1<' in html
    assert (
        '2</span> <span data-role="votes-word">votes</span> so far' in html
        and "You voted for <strong>B</strong>" in html
    )


def test_voting_waits_for_the_answers_and_a_failed_answer_cannot_win(as_owner, workspace, owner):
    group = voting_group(workspace, owner, n=2)
    running = start_round(group, owner)
    Round.objects.filter(pk=running.pk).update(status=RoundStatus.RUNNING, deadline=timezone.now())
    html = panel(as_owner, running)
    assert "Voting opens when every answer is in" in html
    assert not any(enabled for _, _, enabled in buttons(html))

    finished = finished_round(group, owner, statuses=(OutputStatus.OK, OutputStatus.ERROR))
    assert [enabled for _, _, enabled in buttons(panel(as_owner, finished))] == [True, False, True, True]


def test_in_blind_mode_the_panel_hides_names_and_tallies_until_i_vote(as_owner, workspace, owner):
    round_ = finished_round(voting_group(workspace, owner, n=2, blind=True), owner)
    colleague = add_member(workspace, "colleague", Role.VIEWER)
    vote_cast(round=round_, user=colleague, verdict="tie")
    before = panel(as_owner, round_)
    assert [label for _, label, _ in buttons(before)][:2] == ["Answer A", "Answer B"]
    # Not merely hidden: no count is in the page until this person has voted.
    assert "data-tally" not in before and "appear once you vote" in before

    vote_cast(round=round_, user=owner, verdict="tie")
    after = panel(as_owner, round_)
    assert [label for _, label, _ in buttons(after)][:2] == ["A", "B"]
    assert 'data-tally="tie">2<' in after


def test_the_report_gives_wins_and_win_rates_with_exact_intervals(as_owner, workspace, owner):
    group = voting_group(workspace, owner, n=2, title="Report me")
    people = [owner, *(add_member(workspace, f"p{n}", Role.VIEWER) for n in range(3))]
    rounds = [finished_round(group, owner) for _ in range(2)]
    for round_ in rounds:
        a, b = round_.outputs.order_by("variant__position")
        vote_cast(round=round_, user=people[0], output_id=a.pk)
        vote_cast(round=round_, user=people[1], output_id=a.pk)
        vote_cast(round=round_, user=people[2], output_id=b.pk)
        vote_cast(round=round_, user=people[3], verdict="tie")

    html = as_owner.get(f"/votes/groups/{group.pk}/report/").content.decode()
    rows = re.findall(r"<tr>\s*<td><strong>(\w)</strong></td>.*?</tr>", html, re.S)
    assert rows == ["A", "B"]
    low, high = proportion_confint(4, 6, alpha=0.05, method="beta")  # exact, as beside the pair's sign test
    a_row = re.search(r"<td><strong>A</strong></td>(.*?)</tr>", html, re.S).group(1)
    cells = re.findall(r'<td class="num">(.*?)</td>', a_row)
    assert cells == ["4", "6", "67%"]
    assert f"{round(100 * low)}–{round(100 * high)}%" in a_row
    assert "8 votes on Report me: 6 with a winner, 2 ties" in html
    assert "Early days" in html


def test_the_report_of_a_group_without_votes_says_there_are_none(as_owner, workspace, owner):
    group = voting_group(workspace, owner, n=2)
    html = as_owner.get(f"/votes/groups/{group.pk}/report/").content.decode()
    assert html.count("no decisive votes") == 2 and "0 votes on" in html
