"""Blind mode hides which answer is which from ids too: answers are created in a random order per round."""

import pytest

from compare.rounds.start import round_start
from tests.fixtures.voting_factories import voting_group

pytestmark = pytest.mark.django_db


def id_orders(group, user, repeat: int) -> list[list[int]]:
    rounds = round_start(group=group, user=user, repeat=repeat)
    return [list(r.outputs.order_by("id").values_list("variant__position", flat=True)) for r in rounds]


def test_blind_rounds_number_their_answers_in_a_random_order(workspace, owner):
    orders = id_orders(voting_group(workspace, owner, n=5, blind=True), owner, repeat=20)
    assert any(order != [1, 2, 3, 4, 5] for order in orders)
    assert all(sorted(order) == [1, 2, 3, 4, 5] for order in orders)


def test_open_rounds_keep_the_variants_order(workspace, owner):
    orders = id_orders(voting_group(workspace, owner, n=5), owner, repeat=3)
    assert orders == [[1, 2, 3, 4, 5]] * 3
