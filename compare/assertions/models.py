"""One stored result per answer and assertion; the answer's overall verdict lives on Output (`assertions_passed`),
so "only failing rounds" and pass rates per variant are one indexed filter and one GROUP BY.

They live in compare's app (imported by compare.models) but in this package, beside the code that uses them.
"""

from __future__ import annotations

from django.db import models


class AssertionResult(models.Model):
    output = models.ForeignKey("compare.Output", on_delete=models.CASCADE, related_name="assertion_results")
    position = models.PositiveSmallIntegerField()  # index in the round's effective list (group's, then the row's)
    type = models.CharField(max_length=60)  # as written, with any `not-`
    metric = models.CharField(max_length=200, blank=True)
    # None while a model-graded result waits for its grader (state pending) or when the grader failed (not_graded).
    passed = models.BooleanField(null=True)
    score = models.FloatField(null=True)
    reason = models.TextField(blank=True)
    state = models.CharField(max_length=12, default="graded")  # lab.assertions: graded, pending, not_graded

    class Meta:
        ordering = ["output", "position"]
        constraints = [
            # Also serves "the results of an answer, in order".
            models.UniqueConstraint(fields=["output", "position"], name="assertionresult_one_per_position"),
        ]

    def __str__(self) -> str:
        return f"{self.type}: {self.state if self.passed is None else 'pass' if self.passed else 'fail'}"
