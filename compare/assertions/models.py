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
    passed = models.BooleanField()
    score = models.FloatField()
    reason = models.TextField(blank=True)

    class Meta:
        ordering = ["output", "position"]
        constraints = [
            # Also serves "the results of an answer, in order".
            models.UniqueConstraint(fields=["output", "position"], name="assertionresult_one_per_position"),
        ]

    def __str__(self) -> str:
        return f"{self.type}: {'pass' if self.passed else 'fail'}"
