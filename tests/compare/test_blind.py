"""Blind mode through its one module (compare.blind): what each person may see of a round, and when."""

import pytest

from compare.blind import creation_order, labels_visible, outputs_as_seen_by, tally_as_seen, tally_for_channel
from compare.rounds.start import round_start
from compare.selectors import round_with_outputs
from lab.models import Role
from tests.fixtures.factories import add_member
from tests.fixtures.voting_factories import finished_round, voting_group
from voting.services import vote_cast

pytestmark = pytest.mark.django_db

TALLY = {"outputs": {"1": 2}, "tie": 1, "all_bad": 0, "total": 3}


def seen_by(round_, user, **kwargs):
    outputs, visible = outputs_as_seen_by(round_with_outputs(round_), user, **kwargs)
    return visible, outputs


def test_before_voting_a_blind_round_shows_answer_letters_with_every_name_blank(workspace, owner):
    round_ = finished_round(voting_group(workspace, owner, blind=True), owner)
    visible, outputs = seen_by(round_, owner)
    assert visible is False and labels_visible(round_, owner) is False
    assert [o.seen.label for o in outputs] == ["Answer A", "Answer B", "Answer C"]
    for output in outputs:
        seen = output.seen
        assert (seen.variant, seen.position, seen.model, seen.rendered_prompt, seen.rendered_system_prompt) == (
            (None,) * 5
        )


def test_each_person_gets_their_own_column_order_and_the_same_one_every_time(workspace, owner):
    round_ = finished_round(voting_group(workspace, owner, n=5, blind=True), owner)
    people = [owner, *(add_member(workspace, f"voter{i}", Role.VIEWER) for i in range(5))]
    orders = [tuple(o.pk for o in seen_by(round_, person)[1]) for person in people]
    assert orders == [tuple(o.pk for o in seen_by(round_, person)[1]) for person in people]
    assert len(set(orders)) > 1


def test_my_vote_reveals_names_model_and_prompts_to_me_alone(workspace, owner):
    round_ = finished_round(voting_group(workspace, owner, blind=True), owner)
    teammate = add_member(workspace, "tess", Role.VIEWER)
    first = seen_by(round_, owner)[1][0]
    vote_cast(round=round_, user=owner, output_id=first.pk)
    visible, outputs = seen_by(round_, owner)
    assert visible is True
    assert [(o.seen.label, o.seen.position, o.seen.model) for o in outputs] == [
        ("A", 1, "simulated::instant"),
        ("B", 2, "simulated::instant"),
        ("C", 3, "simulated::instant"),
    ]
    assert all(o.seen.variant == o.variant_id and o.seen.rendered_prompt == o.rendered_prompt for o in outputs)
    assert seen_by(round_, teammate)[0] is False


def test_an_open_comparison_shows_names_unless_the_page_asks_for_blind(workspace, owner):
    round_ = finished_round(voting_group(workspace, owner), owner)
    assert [o.seen.label for o in seen_by(round_, owner)[1]] == ["A", "B", "C"]
    visible, outputs = seen_by(round_, owner, blind=True)  # the voting inbox's own blind mode
    assert visible is False and {o.seen.model for o in outputs} == {None}


def test_a_blind_comparison_creates_its_answers_in_no_fixed_order(workspace, owner):
    variants = list(voting_group(workspace, owner, n=5, blind=True).variants.order_by("position"))
    orders = {tuple(v.pk for v in creation_order(variants[0].group, variants)) for _ in range(10)}
    assert len(orders) > 1
    open_group = voting_group(workspace, owner, n=5)
    open_variants = list(open_group.variants.order_by("position"))
    assert creation_order(open_group, open_variants) == open_variants


def test_each_blind_round_of_a_run_creates_its_answers_in_its_own_order(workspace, owner):
    group = voting_group(workspace, owner, n=5, blind=True)
    rounds = round_start(group=group, user=owner, repeat=10, enqueue=False)
    orders = {tuple(r.outputs.order_by("pk").values_list("variant__position", flat=True)) for r in rounds}
    assert len(orders) > 1  # one order for all ten: 1 in 120**9 by chance


def test_the_tally_is_a_total_only_for_someone_who_may_not_see_names(workspace, owner):
    assert tally_as_seen(TALLY, labels_visible=False) == {"total": 3}
    assert tally_as_seen(TALLY, labels_visible=True) == TALLY
    blind = finished_round(voting_group(workspace, owner, blind=True), owner, enqueue=False)
    open_ = finished_round(voting_group(workspace, owner), owner, enqueue=False)
    assert tally_for_channel(blind, TALLY) == {"total": 3}
    assert tally_for_channel(open_, TALLY) == TALLY
