"""Grade one answer against parsed assertions and combine the results as promptfoo's test result does
(src/assertions/assertionsResult.ts): the score is the weighted mean of the component scores; the test fails when
any component fails (its reason is the last failure's) unless the test has a `threshold`, in which case it passes
exactly when the weighted score reaches it. No assertions at all pass with score 1.
"""

from __future__ import annotations

from dataclasses import dataclass

from lab.assertions.checks import CHECKS, CheckError
from lab.assertions.facts import AnswerFacts
from lab.assertions.spec import AssertionSpec


@dataclass(frozen=True)
class ComponentResult:
    passed: bool
    score: float
    reason: str
    spec: AssertionSpec


@dataclass(frozen=True)
class Grading:
    passed: bool
    score: float
    reason: str
    components: list[ComponentResult]


def grade_one(spec: AssertionSpec, facts: AnswerFacts) -> ComponentResult:
    """One assertion; a promptfoo invariant or bad value fails it with the reason promptfoo would give."""
    try:
        passed, score, reason = CHECKS[spec.base_type](spec, spec.rendered_value(facts.vars), facts)
    except (CheckError, ValueError) as error:
        passed, score, reason = False, 0.0, str(error)
    return ComponentResult(passed=passed, score=float(score), reason=reason, spec=spec)


def grade(specs: list[AssertionSpec], facts: AnswerFacts, *, threshold: float | None = None) -> Grading:
    """Every assertion on one answer, and the test's verdict (`threshold` is the promptfoo test's own)."""
    if not specs:
        return Grading(passed=True, score=1.0, reason="No assertions", components=[])
    components = [grade_one(spec, facts) for spec in specs]
    total_weight = sum(spec.weight for spec in specs)
    weighted = sum(result.score * result.spec.weight for result in components)
    score = weighted / total_weight if total_weight > 0 else 0.0
    failures = [result.reason for result in components if not result.passed]
    passed, reason = not failures, failures[-1] if failures else "All assertions passed"
    if threshold is not None:
        passed = score >= threshold
        reason = f"Aggregate score {score:.2f} {'≥' if passed else '<'} {threshold:g} threshold"
    return Grading(passed=passed, score=score, reason=reason, components=components)
