"""An experiment (the custom comparison a file or form made, with what it was made from) and each answer's evaluation.

They live in compare's app (imported by compare.models) but in this package, beside the code that uses them.
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q

from lab.jobs.models import UNFINISHED, Job, job_transitions

# Models of compare's own module are named as strings: compare.models imports this module, never the reverse.


class Experiment(models.Model):
    group = models.OneToOneField("compare.CompareGroup", on_delete=models.CASCADE, related_name="experiment")
    source = models.CharField(max_length=300, blank=True)  # the file it was read from, or "form"
    # The file as understood: names kept, `$file:` and `file:` references read in, our placeholder syntax. Export
    # writes the group's variants, which this names; it is also what the page's "run again" starts from.
    config = models.JSONField()
    budget = models.DecimalField(max_digits=14, decimal_places=6, null=True, blank=True)  # USD; None = no cap
    # The budget's ledger (compare.experiments.budget): the worst cases of the calls in flight, and what the calls
    # settled so far cost. Changed only by conditional UPDATEs, so the cap holds across processes.
    budget_reserved = models.DecimalField(max_digits=16, decimal_places=8, default=0)
    budget_spent = models.DecimalField(max_digits=16, decimal_places=8, default=0)
    estimate = models.JSONField(default=dict, blank=True)
    run_id = models.UUIDField(null=True, blank=True)  # the rounds of its run (Round.run_id)
    # A run being written in parts (compare.experiments.services.experiment_start_in_parts): its first rounds are
    # there, `run_id` is set once the others are.
    starting_run_id = models.UUIDField(null=True, blank=True)
    stopped_reason = models.TextField(blank=True)  # set when the budget cap stopped it, readable
    # The earlier run this one was checked against for regressions (`--baseline`, or the page's "compare").
    baseline = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(budget__isnull=True) | Q(budget__gt=0), name="experiment_budget_positive"
            ),
            models.CheckConstraint(condition=Q(budget_reserved__gte=0), name="experiment_budget_reserved_nonnegative"),
        ]

    def __str__(self) -> str:
        return self.group.title

    @property
    def evaluates(self) -> bool:
        """Whether each answer gets an evaluation (a judge's scores or a schema's check): without either the run
        has no evaluations at all."""
        return bool(self.config.get("evaluation") or self.config.get("structured-output"))


class BaselinePin(models.Model):
    """The run that experiments of one name are checked against (`--baseline latest`), pinned by a person."""

    workspace = models.ForeignKey("lab.Workspace", on_delete=models.CASCADE, related_name="+")
    name = models.CharField(max_length=200)  # the experiment's name (its comparison's title)
    experiment = models.ForeignKey(Experiment, on_delete=models.CASCADE, related_name="pins")
    pinned_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    pinned_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            # Also serves "the pinned baseline of experiments named N".
            models.UniqueConstraint(fields=["workspace", "name"], name="baselinepin_one_per_experiment_name"),
        ]

    def __str__(self) -> str:
        return f"{self.name}: {self.experiment_id}"


class DatasetRunPin(models.Model):
    """The dataset run of a comparison that its later dataset runs are checked against, pinned by a person."""

    group = models.OneToOneField("compare.CompareGroup", on_delete=models.CASCADE, related_name="baseline_run_pin")
    run_id = models.UUIDField()  # the `run_id` its rounds share
    pinned_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    pinned_at = models.DateTimeField(auto_now=True)

    def __str__(self) -> str:
        return f"{self.group_id}: {self.run_id}"


class EvaluationStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Evaluating"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"  # the judge could not score it (the reason says why)
    SKIPPED = "skipped", "Skipped"  # no answer to evaluate, or the budget cap was reached


EVALUATION_UNFINISHED = UNFINISHED
EVALUATION_TRANSITIONS = job_transitions(
    done=[EvaluationStatus.DONE], ended=[EvaluationStatus.FAILED, EvaluationStatus.SKIPPED]
)


class Evaluation(Job):
    """One answer of an experiment, checked against the schema and scored pointwise by the judge: a job of kind
    `evaluation` (lab.jobs). It is created queued with its round, and sent (its `enqueued_at` set) once the round
    finishes; until then it waits for its round, and the sweeper leaves it alone."""

    experiment = models.ForeignKey(Experiment, on_delete=models.CASCADE, related_name="evaluations")
    output = models.OneToOneField("compare.Output", on_delete=models.CASCADE, related_name="evaluation")
    status = models.CharField(max_length=10, choices=EvaluationStatus.choices, default=EvaluationStatus.QUEUED)
    score = models.FloatField(null=True, blank=True)  # 0–1; None when not judged
    scale_score = models.FloatField(null=True, blank=True)  # on the evaluation type's scale, e.g. 4 on 1-5
    reason = models.TextField(blank=True)
    # What of the request the judge was not shown, e.g. its images to a text-only model (judging/images.py).
    inputs_note = models.TextField(blank=True)
    category = models.CharField(max_length=60, blank=True)  # a classification type's category for the answer
    schema_valid = models.BooleanField(null=True, blank=True)  # None when the experiment has no schema
    schema_errors = models.JSONField(default=list, blank=True)
    judge_calls = models.PositiveIntegerField(default=0)
    input_tokens = models.PositiveIntegerField(default=0)
    output_tokens = models.PositiveIntegerField(default=0)
    # What the estimate would have said for this call's input: the ratio to the real count calibrates estimates.
    estimated_input_tokens = models.PositiveIntegerField(default=0)
    cost = models.DecimalField(max_digits=14, decimal_places=8, null=True, blank=True)  # USD; None = unknown
    latency_ms = models.PositiveIntegerField(null=True, blank=True)

    transitions = EVALUATION_TRANSITIONS

    class Meta:
        ordering = ["id"]
        constraints = [
            *Job.Meta.constraints,
            models.CheckConstraint(condition=Q(status__in=EvaluationStatus.values), name="evaluation_status_valid"),
            models.CheckConstraint(
                condition=Q(score__isnull=True) | (Q(score__gte=0) & Q(score__lte=1)),
                name="evaluation_score_in_unit_interval",
            ),
        ]
        indexes = [
            *Job.Meta.indexes,
            # Progress and budget: an experiment's evaluations by status.
            models.Index(fields=["experiment", "status"], name="evaluation_experiment_status"),
        ]

    def __str__(self) -> str:
        return f"{self.output}: {self.status} {self.score}"
