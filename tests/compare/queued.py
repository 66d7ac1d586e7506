"""Rounds sent to a test worker's own queue, waited on until every one has finished."""

import time

from compare.models import Round
from compare.tasks import run_round


def run_on_queue(rounds: list[Round], queue: str, timeout: float = 60) -> None:
    for round_ in rounds:
        run_round.apply_async((round_.pk,), queue=queue)
    deadline = time.monotonic() + timeout
    while Round.objects.filter(pk__in=[r.pk for r in rounds]).unfinished().exists():
        assert time.monotonic() < deadline, "the rounds did not finish"
        time.sleep(0.1)
