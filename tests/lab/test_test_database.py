"""The test process's own database sessions: in a deadlock with another session, the other one is ended."""

import threading
import time

import psycopg
import pytest
from django.db import connection, transaction

from tests.fixtures import processes


@pytest.mark.django_db(transaction=True)
def test_a_deadlock_with_another_session_ends_the_other_session_even_when_this_one_waited_first():
    # As when a test's closing TRUNCATE meets a child process's write: this session waits first, then the other
    # closes the cycle. With both at Postgres's default timeout, this one would be ended.
    other = psycopg.connect(processes.test_database_url())
    locked, ended = threading.Event(), []

    def child() -> None:
        try:
            with other.transaction():
                other.execute("LOCK TABLE auth_group IN ACCESS EXCLUSIVE MODE")
                locked.set()
                while not other.execute(
                    "SELECT count(*) FROM pg_locks WHERE pid = %s AND NOT granted", [test_pid]
                ).fetchone()[0]:
                    time.sleep(0.01)  # until the test's session waits for auth_group
                other.execute("LOCK TABLE lab_workspace IN ACCESS EXCLUSIVE MODE")
        except psycopg.errors.DeadlockDetected as error:
            ended.append(error)

    try:
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute("SELECT pg_backend_pid()")
            test_pid = cursor.fetchone()[0]
            cursor.execute("LOCK TABLE lab_workspace IN ACCESS EXCLUSIVE MODE")
            thread = threading.Thread(target=child)
            thread.start()
            assert locked.wait(10)
            cursor.execute("LOCK TABLE auth_group IN ACCESS EXCLUSIVE MODE")  # granted once the other is ended
        thread.join(10)
    finally:
        other.close()
    assert len(ended) == 1
