"""The judge page's agreement figure (a voting partial) equals the statistics module's on a fixture of votes and
verdicts: share with its interval and Cohen's kappa, with and without ties."""

import re

import pytest

from judging.models import Verdict, VerdictStatus
from judging.selectors import judge_round_choices
from lab.stats.agreement import JudgedRound, judge_agreement
from lab.stats.wording import percent, percent_interval
from tests.fixtures.factories import add_member
from tests.fixtures.judging_factories import answered_round, judged_group, make_judge
from voting.services import vote_cast

# Per round: the judge's pick (answer index or None for a tie) and the team's votes (index, "tie" or "all_bad").
FIXTURE = [
    (0, [0, 0, 1]),
    (1, [1, 1, "tie"]),
    (0, [1, 1, 0]),
    (None, ["tie", "tie", 0]),
    (2, [2, 2, 2]),
    (1, [0, 0, 0]),
    (None, [0, 1, "all_bad"]),  # no team majority: counted apart
    (0, [0, "all_bad", 0]),
    (2, [1, 2, 2]),
    (1, [1, 1, 1]),
    (0, []),  # no votes: not in the figures at all
]


@pytest.fixture
def judged_rounds(workspace, owner, fake_llm, connections):
    judge, _ = make_judge(workspace, owner, fake_llm)
    voters = [owner, add_member(workspace, "v1"), add_member(workspace, "v2")]
    group = judged_group(workspace, owner, count=3)
    expected = []
    for pick, votes in FIXTURE:
        round_ = answered_round(group, owner, ["one", "two", "three"])
        outputs = list(round_.outputs.order_by("variant__position"))
        Verdict.objects.create(
            round=round_,
            judge=judge,
            judge_name=judge.name,
            judge_model=judge.model,
            scale="1-5",
            mode="relative",
            status=VerdictStatus.DONE,
            decided_by="scores",
            winner=outputs[pick] if pick is not None else None,
            tie=pick is None,
        )
        for voter, vote in zip(voters, votes, strict=False):
            if isinstance(vote, int):
                vote_cast(round=round_, user=voter, output_id=outputs[vote].pk)
            else:
                vote_cast(round=round_, user=voter, verdict=vote)
        if votes:
            keys = [str(output.pk) for output in outputs]
            human = tuple(keys[vote] if isinstance(vote, int) else vote for vote in votes)
            expected.append(JudgedRound(tuple(keys), keys[pick] if pick is not None else "tie", human))
    return judge, judge_agreement(expected)


def test_judge_choices_list_each_decided_round_in_shown_order(judged_rounds):
    judge, _ = judged_rounds

    choices = judge_round_choices(judge)

    assert len(choices) == len(FIXTURE)
    assert all(len(choice.shown) == 3 for choice in choices)
    assert sum(choice.winner is None for choice in choices) == 2


def test_the_agreement_partial_shows_the_statistics_modules_figures(client, owner, judged_rounds):
    judge, reference = judged_rounds
    client.force_login(owner)

    html = client.get(f"/votes/judges/{judge.pk}/agreement/").content.decode()

    rows = re.findall(r'<tr data-role="agreement-row">(.*?)</tr>', html, re.DOTALL)
    assert len(rows) == 2
    for row, agreement in zip(rows, (reference.with_ties, reference.without_ties), strict=True):
        cell = dict(re.findall(r'data-role="([a-z-]+)">([^<]*)<', row))
        assert int(cell["rounds"]) == agreement.rounds and int(cell["agreed"]) == agreement.agreed
        assert cell["share"] == percent(agreement.share)
        assert cell["share-interval"] == percent_interval(agreement.share_low, agreement.share_high)
        assert cell["kappa"] == f"{agreement.kappa:.2f}"
        assert cell["kappa-interval"] == f"{agreement.kappa_low:.2f} to {agreement.kappa_high:.2f}"
    assert reference.with_ties.rounds == 9 and reference.rounds_without_majority == 1
    assert "1 round without a team majority left out" in html


def test_the_judge_page_fetches_the_agreement_partial(client, owner, judged_rounds):
    judge, _ = judged_rounds
    client.force_login(owner)

    html = client.get(f"/judges/{judge.pk}/").content.decode()

    assert f'data-src="/votes/judges/{judge.pk}/agreement/"' in html
