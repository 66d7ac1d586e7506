"""The registry of job kinds: which model holds a kind's rows, which task runs one, how a row fails, its lane."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .models import Job


class Lane:
    """Celery queues: a worker keeps capacity for interactive work, so a batch never delays it."""

    INTERACTIVE = "interactive"  # a single round someone started from the page or the API, and its verdict
    BATCH = "batch"  # experiment rounds, evaluations, runs of many rounds

    ALL = (INTERACTIVE, BATCH)


@dataclass(frozen=True)
class JobKind:
    name: str  # "round", "verdict", "evaluation"
    model: type[Job]  # a model that inherits the one job schema (models.py)
    task: str  # the Celery task (by name) that runs one message
    # Fails one unfinished row with a readable error and announces it; False when it had finished meanwhile.
    fail: Callable[[int, str], bool]
    # The lane a message with this key goes to.
    lane_of: Callable[[Any], str]
    worker_stopped: str  # the error of a running row whose deadline passed: its worker is gone
    noun: str  # for messages: "round", "verdict", "evaluation"
    # The field a message carries (a round's messages carry its pk; evaluations are sent per round).
    message_key: str = "pk"
    # The field that says since when a queued row has waited for a worker; past the expiry it is failed.
    queued_since: str = "enqueued_at"
    # What else goes back to queued with a row taken back from a worker that is gone (a round's answers).
    on_reclaim: Callable[[int], None] | None = None


_kinds: dict[str, JobKind] = {}


def register(kind: JobKind) -> None:
    """Called from an app's `ready()`; registering the same name again replaces it (tests reload apps)."""
    _kinds[kind.name] = kind


def kind(name: str) -> JobKind:
    return _kinds[name]


def registered() -> list[JobKind]:
    return list(_kinds.values())
