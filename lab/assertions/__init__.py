"""Assertions with promptfoo's names and semantics: parse a list of promptfoo-style dicts, grade one answer.

Pure evaluation, no Django models: `parse_assertions` validates (a ValidationError naming the index and key),
`grade` checks one answer's facts against the parsed specs and combines them as promptfoo's test result does
(weighted mean score; any failure fails the test unless the test's `threshold` decides). No user code ever runs:
`javascript`, `python`, `webhook` and the like are refused at parse time. compare stores and shows the results.
"""

from lab.assertions.facts import AnswerFacts
from lab.assertions.grading import ComponentResult, Grading, grade
from lab.assertions.spec import AssertionSpec, parse_assertions

__all__ = ["AnswerFacts", "AssertionSpec", "ComponentResult", "Grading", "grade", "parse_assertions"]
