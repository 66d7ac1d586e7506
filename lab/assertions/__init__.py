"""Assertions with promptfoo's names and semantics: parse a list of promptfoo-style dicts, grade one answer.

Pure evaluation, no Django models: `parse_assertions` validates (a ValidationError naming the index and key),
`grade` checks one answer's facts against the parsed specs and combines them as promptfoo's test result does
(weighted mean score; any failure fails the test unless the test's `threshold` decides). No user code ever runs:
`javascript`, `python`, `webhook` and the like are refused at parse time. compare stores and shows the results.
The model-graded types (`llm-rubric`, `g-eval`, `model-graded-closedqa`, `similar`) are left pending by `grade`;
model_graded.py holds their prompts and reads their replies, and judging's job calls the grader.
"""

from lab.assertions.facts import AnswerFacts
from lab.assertions.grading import GRADED, NOT_GRADED, PENDING, ComponentResult, Grading, combine, grade
from lab.assertions.spec import AssertionSpec, is_model_graded, parse_assertions

__all__ = [
    "GRADED",
    "NOT_GRADED",
    "PENDING",
    "AnswerFacts",
    "AssertionSpec",
    "ComponentResult",
    "Grading",
    "combine",
    "grade",
    "is_model_graded",
    "parse_assertions",
]
