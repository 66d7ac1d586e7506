"""Two people asking the inbox at the same moment never get the same last round while another is left."""

import threading

import pytest
from django.db import connection

from lab.models import Role
from tests.fixtures.factories import add_member
from tests.fixtures.voting_factories import finished_round, voting_group
from voting.inbox.selectors import InboxFilters
from voting.inbox.services import inbox_serve
from voting.services import vote_cast


def serve_at_once(workspace, users) -> list[int]:
    barrier = threading.Barrier(len(users))
    served: dict[int, int] = {}

    def ask(user):
        try:
            barrier.wait()
            served[user.pk] = inbox_serve(workspace=workspace, user=user, filters=InboxFilters()).pk
        finally:
            connection.close()  # each thread has its own database connection

    threads = [threading.Thread(target=ask, args=(user,)) for user in users]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    return [served[user.pk] for user in users]


@pytest.mark.django_db(transaction=True)
def test_two_voters_at_once_get_the_last_two_rounds_one_each(workspace, owner):
    alice = add_member(workspace, "alice", Role.VIEWER)
    bob = add_member(workspace, "bob", Role.VIEWER)
    for attempt in range(5):
        group = voting_group(workspace, owner, title=f"attempt {attempt}")
        rounds = {finished_round(group, owner).pk for _ in range(2)}
        served = serve_at_once(workspace, [alice, bob])
        assert set(served) == rounds, f"attempt {attempt}: both got round {served[0]}"
        # Done with this comparison: both vote on both rounds so the next attempt starts from two open rounds.
        for user in (alice, bob):
            for round_ in group.rounds.all():
                vote_cast(round=round_, user=user, verdict="tie")


@pytest.mark.django_db(transaction=True)
def test_with_one_round_left_both_may_have_it(workspace, owner):
    alice = add_member(workspace, "alice", Role.VIEWER)
    bob = add_member(workspace, "bob", Role.VIEWER)
    only = finished_round(voting_group(workspace, owner), owner)
    assert serve_at_once(workspace, [alice, bob]) == [only.pk, only.pk]
