"""Kept vote counts under real concurrency (two Postgres connections) and across the migration that fills them."""

import threading
import time

import pytest
from django.db import connection, connections, transaction
from django.db.migrations.executor import MigrationExecutor

from tests.fixtures.voting_factories import finished_round, voting_group
from voting.models import Vote, VoteCount
from voting.reports.vote_counts import disagreements, kept, recounted
from voting.services import vote_cast

WAIT_S = 20  # how long a step may wait for the other thread before the test gives up


def waiting_on_a_lock(pid: int) -> bool:
    with connection.cursor() as cursor:
        cursor.execute("SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", [pid])
        row = cursor.fetchone()
    return row is not None and row[0] == "Lock"


def in_thread(target, errors: list) -> threading.Thread:
    def run():
        try:
            target()
        except Exception as exc:  # reported by the test, not lost in the thread
            errors.append(exc)
        finally:
            connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    return thread


@pytest.mark.django_db(transaction=True)
def test_two_voters_voting_at_once_for_the_same_answer_both_count(workspace, owner, editor):
    group = voting_group(workspace, owner)
    round_ = finished_round(group, owner, enqueue=False)
    answer = round_.outputs.get(variant__position=1)
    first_in, release, second_pid, errors = threading.Event(), threading.Event(), [], []

    def first():
        with transaction.atomic():
            vote_cast(round=round_, user=owner, output_id=answer.pk)
            first_in.set()  # its count is raised but not committed: the other voter's increment must wait for it
            release.wait(WAIT_S)

    def second():
        first_in.wait(WAIT_S)
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            second_pid.append(cursor.fetchone()[0])
        vote_cast(round=round_, user=editor, output_id=answer.pk)

    threads = [in_thread(first, errors), in_thread(second, errors)]
    deadline = time.monotonic() + WAIT_S
    while not (second_pid and waiting_on_a_lock(second_pid[-1])) and time.monotonic() < deadline:
        time.sleep(0.02)
    overlapped = bool(second_pid) and waiting_on_a_lock(second_pid[-1])
    release.set()
    for thread in threads:
        thread.join(WAIT_S)
    assert not errors
    assert overlapped, "the second vote never waited on the first: the test did not make them overlap"
    assert list(VoteCount.objects.filter(group=group).values_list("variant_id", "votes")) == [(answer.variant_id, 2)]
    assert disagreements() == []


@pytest.mark.django_db(transaction=True)
def test_the_migration_counts_the_votes_cast_before_it(workspace, owner, editor):
    group = voting_group(workspace, owner)
    rounds = [finished_round(group, owner, enqueue=False) for _ in range(4)]
    vote_cast(round=rounds[0], user=owner, verdict="tie")
    executor = MigrationExecutor(connection)
    executor.migrate([("voting", "0006_vote_counts")])  # no triggers yet, and no counts
    try:
        assert not VoteCount.objects.exists()
        for round_ in rounds[1:]:  # votes written as before this change: no count follows them
            for user, position in ((owner, 1), (editor, 2)):
                output = round_.outputs.get(variant__position=position)
                Vote.objects.create(round=round_, group=group, user=user, choice="winner", output=output,
                                    variant_id=output.variant_id)  # fmt: skip
        assert not VoteCount.objects.exists()
    finally:
        executor = MigrationExecutor(connection)
        executor.migrate(executor.loader.graph.leaf_nodes())
    assert kept() == recounted() and sum(kept().values()) == 7
    vote_cast(round=rounds[0], user=editor, verdict="all_bad")  # and the triggers are back
    assert sum(kept().values()) == 8 and disagreements() == []
