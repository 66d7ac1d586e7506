"""Waiting on rounds a test worker runs: a batch sent to its own queue, or one round sent there some other way."""

import time

import pytest

from compare.models import Round
from compare.tasks import run_round


def run_on_queue(rounds: list[Round], queue: str, timeout: float = 60) -> None:
    for round_ in rounds:
        run_round.apply_async((round_.pk,), queue=queue)
    deadline = time.monotonic() + timeout
    while Round.objects.filter(pk__in=[r.pk for r in rounds]).unfinished().exists():
        assert time.monotonic() < deadline, "the rounds did not finish"
        time.sleep(0.1)


def wait_for_round(round_: Round, timeout: float = 15) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        round_.refresh_from_db()
        if round_.is_finished:
            return
        time.sleep(0.1)
    pytest.fail(f"round {round_.pk} is still {round_.status}")
