"""Judge configurations, the judge a comparison names, and verdicts (per round, and per output within it).

A verdict keeps everything needed to check it later: the letters the judge saw, every call with the order it
was shown, the metrics left out and why, the weights after renormalising, and tokens and cost of judging
(apart from the cost of the answers).
"""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.utils import timezone

from compare.models import CompareGroup, Output, Round
from lab.jobs.models import Job, job_transitions
from lab.models import Workspace

from .classification import Classifier, JudgeKind, classifier_check
from .rubric import ConversationScope, JudgeMode, Rubric, Scale, metrics_from_data


class JudgeConfig(models.Model):
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="judges")
    name = models.CharField(max_length=120)
    model = models.CharField(max_length=300)  # "<connection name>::<model>"
    scale = models.CharField(max_length=10, choices=Scale.choices, default=Scale.ONE_TO_FIVE)
    mode = models.CharField(max_length=10, choices=JudgeMode.choices, default=JudgeMode.RELATIVE)
    metrics = models.JSONField(default=list)  # [{"name", "weight", "low", "high"}], checked by rubric.metrics_from_data
    prompt = models.TextField(blank=True)  # optional custom evaluator prompt with {{placeholders}}
    # Fixed randomness (letters and orders) for reproducible runs; empty means a fresh seed per verdict.
    seed = models.BigIntegerField(null=True, blank=True)
    # Strict by default: a reply must be JSON (one code fence at most); lenient reads the largest JSON object in it.
    lenient_replies = models.BooleanField(default=False)
    # In a conversation's later turn: judge the last answer with the conversation as context, or the whole of it.
    conversation = models.CharField(
        max_length=10, choices=ConversationScope.choices, default=ConversationScope.LAST_TURN
    )
    # A rubric judge scores answers; a classification judge (Evidently's templates) puts each in a category.
    kind = models.CharField(max_length=30, choices=JudgeKind.choices, default=JudgeKind.RUBRIC)
    classification = models.JSONField(default=dict, blank=True)  # classifier_check's settings, for those kinds
    input_columns = models.JSONField(default=list, blank=True)  # dataset columns shown to a classification judge
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["name", "id"]
        constraints = [
            # Also serves "the judges of a workspace" (the list page and API).
            models.UniqueConstraint(fields=["workspace", "name"], name="judgeconfig_name_unique_in_workspace"),
            models.CheckConstraint(condition=Q(scale__in=Scale.values), name="judgeconfig_scale_valid"),
            models.CheckConstraint(condition=Q(mode__in=JudgeMode.values), name="judgeconfig_mode_valid"),
            models.CheckConstraint(condition=Q(kind__in=JudgeKind.values), name="judgeconfig_kind_valid"),
            models.CheckConstraint(
                condition=Q(conversation__in=ConversationScope.values), name="judgeconfig_conversation_valid"
            ),
        ]

    def __str__(self) -> str:
        return self.name

    @property
    def classifies(self) -> bool:
        return self.kind != JudgeKind.RUBRIC

    def classifier(self) -> Classifier:
        return classifier_check(
            kind=self.kind, data=self.classification, input_columns=self.input_columns, lenient=self.lenient_replies
        )

    def rubric(self) -> Rubric:
        return Rubric(
            scale=self.scale, metrics=metrics_from_data(self.metrics), prompt=self.prompt, lenient=self.lenient_replies
        )


class GroupJudge(models.Model):
    """The judge a comparison names: each of its finished rounds is judged automatically.

    It lives here rather than on CompareGroup because compare may not import judging.
    """

    group = models.ForeignKey(CompareGroup, on_delete=models.CASCADE, related_name="+")
    judge = models.ForeignKey(JudgeConfig, on_delete=models.CASCADE, related_name="group_links")
    # A judge sharing a model family with a variant is refused unless someone overrides the rule: who and when.
    family_override_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    family_override_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["group"], name="groupjudge_one_per_group"),
        ]

    def __str__(self) -> str:
        return f"{self.group} judged by {self.judge}"


class VerdictStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Judging"
    DONE = "done", "Done"
    FAILED = "failed", "Failed"


VERDICT_JOB = "verdict"  # the verdict's job kind in lab.jobs (registered by judging.jobs)
VERDICT_TRANSITIONS = job_transitions(done=[VerdictStatus.DONE], ended=[VerdictStatus.FAILED])


class Verdict(Job):
    """A judge's verdict on one round: a job of kind `verdict` (lab.jobs)."""

    round = models.ForeignKey(Round, on_delete=models.CASCADE, related_name="verdicts")
    # Kept when the judge configuration is deleted: the snapshot below still says how it was judged.
    judge = models.ForeignKey(JudgeConfig, null=True, on_delete=models.SET_NULL, related_name="verdicts")
    judge_name = models.CharField(max_length=120)
    judge_model = models.CharField(max_length=300)
    scale = models.CharField(max_length=10, choices=Scale.choices)
    mode = models.CharField(max_length=10, choices=JudgeMode.choices)
    status = models.CharField(max_length=10, choices=VerdictStatus.choices, default=VerdictStatus.QUEUED)
    winner = models.ForeignKey(Output, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    tie = models.BooleanField(default=False)
    decided_by = models.CharField(max_length=20, blank=True)  # "scores", "head_to_head", "only_answer"
    seed = models.BigIntegerField(null=True, blank=True)  # the seed of letters and orders, to reproduce them
    letters = models.JSONField(default=dict, blank=True)  # {"A": output id, …}: the judge saw only the letters
    weights = models.JSONField(default=dict, blank=True)  # metric → weight after dropping missing metrics (sum 1)
    missing_metrics = models.JSONField(default=list, blank=True)  # [{"name", "reason"}]
    skipped = models.JSONField(default=list, blank=True)  # [{"output", "reason"}]: failed or partial answers
    pairs = models.JSONField(default=list, blank=True)  # pairwise judgements in both orders (judgement.Judgement.pairs)
    calls = models.JSONField(default=list, blank=True)  # one entry per call: what it asked, the order shown, outcome
    judge_calls = models.PositiveIntegerField(default=0)
    input_tokens = models.PositiveIntegerField(default=0)
    output_tokens = models.PositiveIntegerField(default=0)
    cost = models.DecimalField(max_digits=14, decimal_places=8, null=True, blank=True)  # USD; None = unknown
    error = models.TextField(blank=True)
    # What of the request the judge was not shown, e.g. "Judged the text only: … does not take images".
    inputs_note = models.CharField(max_length=300, blank=True)
    requested_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )  # empty when the comparison's judge ran automatically
    created_at = models.DateTimeField(auto_now_add=True)
    # When it was last asked for: its queue time (JobKind.queued_since), from which the sweeper gives up on a
    # queued verdict an hour after. A verdict past its deadline may be taken over by a later request.
    requested_at = models.DateTimeField(default=timezone.now)

    transitions = VERDICT_TRANSITIONS

    class Meta:
        ordering = ["-id"]
        constraints = [
            *Job.Meta.constraints,
            # One verdict per judge and round, so a redelivered task never adds a second. Also serves
            # "the verdicts of a round".
            models.UniqueConstraint(fields=["round", "judge"], name="verdict_one_per_round_and_judge"),
            models.CheckConstraint(condition=Q(status__in=VerdictStatus.values), name="verdict_status_valid"),
            models.CheckConstraint(condition=Q(tie=False) | Q(winner__isnull=True), name="verdict_tie_has_no_winner"),
        ]
        indexes = [
            *Job.Meta.indexes,
            # A judge's diagnostics: its finished verdicts.
            models.Index(fields=["judge", "status"], name="verdict_judge_status"),
        ]

    def __str__(self) -> str:
        return f"{self.judge_name} on {self.round}: {self.status}"


class VerdictOutput(models.Model):
    """One answer within a verdict: its letter, weighted score (0–1) and per-metric scores with reasons."""

    verdict = models.ForeignKey(Verdict, on_delete=models.CASCADE, related_name="outputs")
    output = models.ForeignKey(Output, on_delete=models.CASCADE, related_name="verdict_entries")
    letter = models.CharField(max_length=3, blank=True)  # empty when the answer was not judged
    judged = models.BooleanField(default=True)
    skip_reason = models.CharField(max_length=200, blank=True)
    score = models.FloatField(null=True, blank=True)  # weighted, 0–1; None when not judged
    # metric → {"raw": score on the scale (or null in pairwise mode), "scaled": 0–1, "reason": "…"}
    scores = models.JSONField(default=dict, blank=True)
    rank = models.PositiveSmallIntegerField(null=True, blank=True)  # 1 = best by score
    category = models.CharField(max_length=60, blank=True)  # a classification judge's category for the answer

    class Meta:
        ordering = ["verdict", "rank", "id"]
        constraints = [
            # Also serves "the answers of a verdict".
            models.UniqueConstraint(fields=["verdict", "output"], name="verdictoutput_one_per_output"),
            models.CheckConstraint(
                condition=Q(score__isnull=True) | (Q(score__gte=0) & Q(score__lte=1)),
                name="verdictoutput_score_in_unit_interval",
            ),
            models.CheckConstraint(
                condition=Q(judged=True) | Q(score__isnull=True), name="verdictoutput_skipped_has_no_score"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.verdict} / {self.letter or 'skipped'}: {self.score}"
