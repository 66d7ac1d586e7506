"""Every hook compare offers the apps above it, which it may not import (imports only go down the layers).

Each is filled from the higher app's `ready()` (voting/apps.py, judging/apps.py, and compare/apps.py for its own
experiments) and asked by compare where it needs the answer; docs/architecture.md "Extension points" lists them.
Without a registration compare still loads: blind names stay hidden, the history shows no vote figures, an
experiment's `evaluation` is refused, and a finished round starts nothing further. Pure statistics are no hook:
compare calls lab.stats directly.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from django.dispatch import Signal

if TYPE_CHECKING:
    from .experiments.scoring import Scorer
    from .models import CompareGroup, Round

# Blind mode (compare/blind.py): "has this person voted in this round?" …
RevealCheck = Callable[["Round", object], bool]
# … and "has everyone who votes voted on every finished round of this comparison?" (voting registers both).
ComparisonRevealCheck = Callable[["CompareGroup"], bool]
# The history list (compare/page_selectors.py): {name: expression} evaluated per comparison (OuterRef("pk")).
HistoryAnnotations = Callable[[], dict[str, Any]]

_reveal_checks: list[RevealCheck] = []
_comparison_reveal_checks: list[ComparisonRevealCheck] = []
_history_annotations: list[HistoryAnnotations] = []
_scorers: list[Scorer] = []
# The command line's own grading (compare/experiments/promptfoo/): grade these answers' pending model-graded
# assertions in this process, as the job a worker would run, and return once they are graded (judging registers it).
AssertionGrader = Callable[[list[int]], None]
_assertion_graders: list[AssertionGrader] = []

# Sent inside the transaction that finished the rounds (compare/rounds/worker.py). kwargs: round_ids, the rounds that
# became done (one statement may finish many), lanes, each one's lane (id → lane), and graded, those of them that
# have assertions (compare.assertions.services.with_assertions). Judging creates verdicts, compare's experiments
# evaluate answers, compare's assertions grade them.
round_finished = Signal()
# Sent when answers were graded and some of their assertions wait for a model (compare/assertions/services.py), in
# the transaction that stored them. kwargs: output_ids. Judging queues a grading job per answer.
assertions_pending = Signal()


def register_reveal_check(check: RevealCheck) -> None:
    """Blind mode shows labels and models once any registered check says the user may see them."""
    if check not in _reveal_checks:
        _reveal_checks.append(check)


def register_comparison_reveal_check(check: ComparisonRevealCheck) -> None:
    """A blind comparison is revealed to everyone once any registered check says its voting is over."""
    if check not in _comparison_reveal_checks:
        _comparison_reveal_checks.append(check)


def register_history_annotations(annotations: HistoryAnnotations) -> None:
    """The history annotates each comparison with these too, so its template can show them."""
    if annotations not in _history_annotations:
        _history_annotations.append(annotations)


def register_scorer(scorer: Scorer) -> None:
    """Judging calls this once at start-up; the last registered scorer is the one used."""
    _scorers.append(scorer)


def register_assertion_grader(grader: AssertionGrader) -> None:
    """Judging calls this once at start-up; the last registered grader is the one used."""
    _assertion_graders.append(grader)


def assertion_grader() -> AssertionGrader | None:
    """What grades pending assertions in the calling process, or None without judging (they stay pending)."""
    return _assertion_graders[-1] if _assertion_graders else None


def reveal_allowed(round_: Round, user) -> bool:
    return any(check(round_, user) for check in _reveal_checks)


def voting_over(group: CompareGroup) -> bool:
    return any(check(group) for check in _comparison_reveal_checks)


def history_annotations() -> dict[str, Any]:
    return {name: value for annotations in _history_annotations for name, value in annotations().items()}


def scorer() -> Scorer | None:
    """The experiments' judge (compare/experiments/scoring.py describes what it does), or None without judging."""
    return _scorers[-1] if _scorers else None
