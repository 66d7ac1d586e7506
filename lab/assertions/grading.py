"""Grade one answer against parsed assertions and combine the results as promptfoo's test result does
(src/assertions/assertionsResult.ts): the score is the weighted mean of the component scores; the test fails when
any component fails (its reason is the last failure's) unless the test has a `threshold`, in which case it passes
exactly when the weighted score reaches it. No assertions at all pass with score 1.

A model-graded component is not decided here (no call is made): it is `pending` until the grader's job fills it in,
or `not_graded` when the grader failed. An answer with any component not yet (or never) graded has no verdict
(`passed` None): a grader's failure is never counted as a failure of the answer.
"""

from __future__ import annotations

from dataclasses import dataclass

from lab.assertions.checks import CHECKS, CheckError
from lab.assertions.facts import AnswerFacts
from lab.assertions.spec import AssertionSpec, is_model_graded

GRADED, PENDING, NOT_GRADED = "graded", "pending", "not_graded"
WAITING = "Waiting for the grader."


@dataclass(frozen=True)
class ComponentResult:
    passed: bool
    score: float
    reason: str
    spec: AssertionSpec
    state: str = GRADED  # PENDING: a model grades it later; NOT_GRADED: its grader failed (the reason says why)


@dataclass(frozen=True)
class Grading:
    passed: bool | None  # None while a component is pending or was not graded
    score: float | None
    reason: str
    components: list[ComponentResult]


def grade_one(spec: AssertionSpec, facts: AnswerFacts) -> ComponentResult:
    """One assertion; a promptfoo invariant or bad value fails it with the reason promptfoo would give. A
    model-graded one is left pending for its grader."""
    if is_model_graded(spec):
        return ComponentResult(passed=False, score=0.0, reason=WAITING, spec=spec, state=PENDING)
    try:
        passed, score, reason = CHECKS[spec.base_type](spec, spec.rendered_value(facts.vars), facts)
    except (CheckError, ValueError) as error:
        passed, score, reason = False, 0.0, str(error)
    return ComponentResult(passed=passed, score=float(score), reason=reason, spec=spec)


def grade(specs: list[AssertionSpec], facts: AnswerFacts, *, threshold: float | None = None) -> Grading:
    """Every assertion on one answer, and the test's verdict (`threshold` is the promptfoo test's own)."""
    if not specs:
        return Grading(passed=True, score=1.0, reason="No assertions", components=[])
    return combine([grade_one(spec, facts) for spec in specs], threshold=threshold)


def combine(components: list[ComponentResult], *, threshold: float | None = None) -> Grading:
    """The answer's verdict from its components' results (also once a grader has filled in the pending ones)."""
    specs = [result.spec for result in components]
    if not components:
        return Grading(passed=True, score=1.0, reason="No assertions", components=[])
    if any(result.state != GRADED for result in components):
        waiting = any(result.state == PENDING for result in components)
        reason = WAITING if waiting else "Not graded: a grader failed."
        return Grading(passed=None, score=None, reason=reason, components=components)
    total_weight = sum(spec.weight for spec in specs)
    weighted = sum(result.score * result.spec.weight for result in components)
    score = weighted / total_weight if total_weight > 0 else 0.0
    failures = [result.reason for result in components if not result.passed]
    passed, reason = not failures, failures[-1] if failures else "All assertions passed"
    if threshold is not None:
        passed = score >= threshold
        reason = f"Aggregate score {score:.2f} {'≥' if passed else '<'} {threshold:g} threshold"
    return Grading(passed=passed, score=score, reason=reason, components=components)
