"""A prompt version's win rate and rating accumulate over every vote of every comparison it ran in (a
hand-counted fixture), leave out variants made from it but edited, and its interval is statsmodels' Wilson."""

import pytest
from statsmodels.stats.proportion import proportion_confint

from compare import services
from compare.models import Mode
from compare.prompts import services as prompts
from tests.fixtures.compare_factories import INSTANT
from tests.fixtures.voting_factories import finished_round
from voting.prompt_versions import prompt_standing
from voting.services import vote_cast

pytestmark = pytest.mark.django_db


def comparison(workspace, user, version, *others):
    variants = [{"label": "Library", "model": INSTANT, "prompt": "", "prompt_version": version.pk}]
    variants += [{"label": f"Other {i}", "model": INSTANT, "prompt": text} for i, text in enumerate(others, start=1)]
    return services.group_create(workspace=workspace, user=user, mode=Mode.PROMPTS, variants=variants)


def vote(round_, user, label=None, verdict=None):
    output = round_.outputs.get(variant__label=label).pk if label else None
    vote_cast(round=round_, user=user, output_id=output, verdict=verdict)


def test_a_versions_win_rate_counts_the_votes_of_every_comparison_it_was_in(workspace, owner, editor, client):
    prompt = prompts.prompt_create(workspace=workspace, user=owner, name="Greeter", text="Say hello.")
    v1 = prompt.current
    v2 = prompts.prompt_version_create(prompt=prompt, user=owner, text="Say hello warmly.", parent=v1)

    first = comparison(workspace, owner, v1, "Say hi.")
    r1, r2 = finished_round(first, owner), finished_round(first, owner)
    vote(r1, owner, "Library")  # v1 beats Other 1
    vote(r1, editor, "Other 1")  # v1 loses
    vote(r2, owner, verdict="tie")
    vote(r2, editor, "Library")  # v1 wins

    second = comparison(workspace, owner, v1, "Hey.", "Yo.")
    r3, r4 = finished_round(second, owner), finished_round(second, owner)
    vote(r3, owner, "Other 2")  # v1 loses (to Yo.)
    vote(r3, editor, "Library")  # v1 wins
    vote(r4, owner, verdict="all_bad")

    # Made from v1 but edited before running: its win is not v1's.
    edited = services.group_create(
        workspace=workspace,
        user=owner,
        mode=Mode.PROMPTS,
        variants=[
            {"label": "Library", "model": INSTANT, "prompt": "Say hello, edited.", "prompt_version": v1.pk},
            {"label": "Other 1", "model": INSTANT, "prompt": "Say hi."},
        ],
    )
    vote(finished_round(edited, owner), owner, "Library")
    # v2 ran once against v1 and won.
    head_to_head = services.group_create(
        workspace=workspace,
        user=owner,
        mode=Mode.PROMPTS,
        variants=[
            {"label": "Library", "model": INSTANT, "prompt": "", "prompt_version": v2.pk},
            {"label": "Old", "model": INSTANT, "prompt": "", "prompt_version": v1.pk},
        ],
    )
    vote(finished_round(head_to_head, owner), owner, "Library")

    one, two = prompt_standing(prompt)

    rate = one.win_rate
    # Shown in 8 votes; decisive in 6 (tie and all-bad excluded); won 3: r1 owner, r2 editor, r3 editor.
    assert (rate.appearances, rate.decisive, rate.wins, rate.losses, rate.ties, rate.all_bad) == (8, 6, 3, 3, 1, 1)
    assert rate.win_rate == pytest.approx(3 / 6)
    low, high = proportion_confint(3, 6, alpha=0.05, method="beta")
    assert (rate.ci_low, rate.ci_high) == (pytest.approx(low), pytest.approx(high))
    assert one.comparisons == 3
    # Pairwise matches against other prompts: 4 in the first comparison, r3 owner 1 (v1 vs Yo.), r3 editor 2,
    # r4 all-bad 2 (v1 tied with each), and the loss to v2: 10; wins 2 + 2, losses 1 + 1 + 1, ties 1 + 2.
    rating = one.rating
    assert (rating.matches, rating.wins, rating.losses, rating.ties) == (10, 4, 3, 3)
    assert (two.win_rate.wins, two.win_rate.decisive, two.comparisons) == (1, 1, 1)
    assert two.rating.rating > 1000

    client.force_login(owner)
    partial = client.get(f"/votes/prompts/{prompt.pk}/standing/").content.decode()
    low_pct, high_pct = round(low * 100), round(high * 100)
    assert f"3 of 6 decisive votes = 50% ({low_pct}–{high_pct}%); 1 tie, 1 all bad" in partial
    assert f"from {rating.matches} matches" in partial
