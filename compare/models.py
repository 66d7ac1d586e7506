"""Comparisons: a group of variants, its rounds (one run of every variant) and their outputs; datasets.

Status lives in TextChoices with the legal transitions beside it, and every invariant the code relies on is a
named database constraint.
"""

from __future__ import annotations

import re
import uuid
from datetime import timedelta

from django.conf import settings
from django.db import models
from django.db.models import Q

from lab.engine.fanout import DEFAULT_TIMEOUT_S
from lab.jobs.kinds import Lane
from lab.jobs.models import UNFINISHED, Job, job_transitions
from lab.models import Workspace
from lab.providers.message_rules import Target
from lab.templating import VariantTemplate

MAX_VARIANTS = 5  # for a comparison; an experiment (custom mode) may have more
MAX_EXPERIMENT_VARIANTS = 50
# The timing defaults every form, API field and service reads (docs/fairness.md): variants start this far apart,
# and each gets the same answer budget from its own start, so no column gets more time for its position.
DEFAULT_STAGGER_MS = 50
DEFAULT_TIMEOUT_MS = int(DEFAULT_TIMEOUT_S * 1000)


class Mode(models.TextChoices):
    PROMPTS = "prompts", "Prompts (one model, several prompts)"
    MODELS = "models", "Models (one prompt, several models)"
    CUSTOM = "custom", "Custom (experiments: anything per variant)"


class Dataset(models.Model):
    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="datasets")
    name = models.CharField(max_length=200)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            # The dataset list of a workspace, newest first.
            models.Index(fields=["workspace", "-created_at"], name="dataset_workspace_recent"),
        ]

    def __str__(self) -> str:
        return self.name


class DatasetRow(models.Model):
    dataset = models.ForeignKey(Dataset, on_delete=models.CASCADE, related_name="rows")
    position = models.PositiveIntegerField()
    name = models.CharField(max_length=200, blank=True)
    vars = models.JSONField(default=dict)
    # This row's own assertions (a promptfoo test's `assert`), checked after the comparison's.
    assertions = models.JSONField(default=list, blank=True)

    class Meta:
        ordering = ["dataset", "position"]
        constraints = [
            # Also serves "the rows of a dataset in order".
            models.UniqueConstraint(fields=["dataset", "position"], name="datasetrow_position_unique_in_dataset"),
        ]

    def __str__(self) -> str:
        return self.name or f"Row {self.position}"


# Messages of one list (a variant's own or a group's shared ones): far more than a few-shot prompt needs.
MAX_MESSAGES = 200


class CompareGroup(models.Model):
    """A saved comparison. Settings are fixed once it has rounds; a clone starts the next version."""

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="groups")
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    title = models.CharField(max_length=200)
    mode = models.CharField(max_length=10, choices=Mode.choices)
    system_prompt = models.TextField(blank=True)
    # Messages every variant gets after the system prompt and before its own (few-shot turns): [{role, content}].
    shared_messages = models.JSONField(default=list, blank=True)
    shared_variables = models.JSONField(default=dict, blank=True)
    params = models.JSONField(default=dict, blank=True)  # only the parameters that are set
    # Tools in OpenAI's function format, the tool choice and a response schema (lab.providers.tools, docs/tools.md).
    tools = models.JSONField(default=list, blank=True)
    tool_choice = models.CharField(max_length=80, blank=True)
    response_schema = models.JSONField(null=True, blank=True)
    # promptfoo-style assertions every answer is graded against (lab.assertions; compare/assertions/).
    assertions = models.JSONField(default=list, blank=True)
    blind = models.BooleanField(default=False)
    # A blind comparison's owner ended its blind voting: every round's names show to everyone (compare.blind).
    revealed_at = models.DateTimeField(null=True, blank=True)
    stagger_ms = models.PositiveIntegerField(default=DEFAULT_STAGGER_MS)
    # Every variant's answer budget, counted from when its request is sent: the deadlines are spread by the
    # stagger only, never by position (an old per-position step is gone; the API still accepts and ignores it).
    timeout_ms = models.PositiveIntegerField(default=DEFAULT_TIMEOUT_MS)
    dataset = models.ForeignKey(Dataset, null=True, blank=True, on_delete=models.SET_NULL, related_name="groups")
    cloned_from = models.ForeignKey("self", null=True, blank=True, on_delete=models.SET_NULL, related_name="clones")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(condition=Q(mode__in=Mode.values), name="group_mode_valid"),
            models.CheckConstraint(condition=Q(timeout_ms__gte=100), name="group_timeout_positive"),
        ]
        indexes = [
            # The comparison history of a workspace, newest first (groups list and home page).
            models.Index(fields=["workspace", "-created_at"], name="group_workspace_recent"),
        ]

    def __str__(self) -> str:
        return self.title

    def timeout_s(self) -> float:
        """The same for every variant: the answer's budget, whatever its column."""
        return self.timeout_ms / 1000

    def start_after_s(self, position: int) -> float:
        return (position - 1) * self.stagger_ms / 1000

    def longest_run(self, variant_count: int) -> timedelta:
        """From the first start to the last variant's timeout: how long a round can legitimately stream."""
        if variant_count < 1:
            return timedelta(0)
        return timedelta(seconds=self.start_after_s(variant_count) + self.timeout_s())


PLACEHOLDER_LABEL = re.compile(r"[A-Z]|V\d+")


def placeholder_label(position: int) -> str:
    """The label a variant gets when nobody gives one (the editor hands out the same): A … Z, then V27 …"""
    return chr(ord("A") + position - 1) if position <= 26 else f"V{position}"


def is_placeholder_label(label: str) -> bool:
    """A letter (or V<n>) handed out by position rather than a name someone chose."""
    return PLACEHOLDER_LABEL.fullmatch(label) is not None


class Variant(models.Model):
    group = models.ForeignKey(CompareGroup, on_delete=models.CASCADE, related_name="variants")
    position = models.PositiveSmallIntegerField()  # from 1, as people count columns
    label = models.CharField(max_length=80)
    model = models.CharField(max_length=300)  # "<connection name>::<model>"
    prompt = models.TextField()  # the last user message's template, kept with `messages` (the API's shorthand)
    # The variant's own messages, templates like `prompt`: [{role, content}]; a trailing assistant one is a prefill.
    messages = models.JSONField(default=list, blank=True)
    variables = models.JSONField(default=dict, blank=True)  # overrides of the group's shared variables
    params = models.JSONField(default=dict, blank=True)  # overrides of the group's params (custom mode only)
    # Overrides of the group's tools, tool choice and response schema; null keeps the group's.
    tools = models.JSONField(null=True, blank=True)
    tool_choice = models.CharField(max_length=80, null=True, blank=True)
    response_schema = models.JSONField(null=True, blank=True)
    # The library version this variant was made from (picked, cloned or duplicated); it ran that version only
    # while its prompt is the version's text (compare.prompts.selectors.version_variants).
    prompt_version = models.ForeignKey(
        "PromptVersion", null=True, blank=True, on_delete=models.SET_NULL, related_name="variants"
    )

    class Meta:
        ordering = ["group", "position"]
        constraints = [
            # Also serves "the variants of a group in order".
            models.UniqueConstraint(fields=["group", "position"], name="variant_position_unique_in_group"),
            models.CheckConstraint(condition=Q(position__gte=1), name="variant_position_from_one"),
        ]
        indexes = [
            # The groups list filtered by model, and later the leaderboard by model.
            models.Index(fields=["model"], name="variant_model"),
        ]

    def __str__(self) -> str:
        return f"{self.position}. {self.label} ({self.model})"

    def tool_settings(self) -> tuple[list[dict], str, dict | None]:
        """(tools, tool choice, response schema) this variant runs with: its own where it overrides the group's."""
        group = self.group
        return (
            group.tools if self.tools is None else self.tools,
            group.tool_choice if self.tool_choice is None else self.tool_choice,
            group.response_schema if self.response_schema is None else self.response_schema,
        )

    def template(self, target: Target | None = None) -> VariantTemplate:
        """The variant as the templating module renders it (the editor preview, run checks and the worker); with
        `target`, the rules of the provider its model is on too."""
        return VariantTemplate(self.position, self.label, self.prompt, self.variables, self.messages, target)


class RoundStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    DONE = "done", "Done"
    CANCELLED = "cancelled", "Cancelled"
    FAILED = "failed", "Failed"


ROUND_UNFINISHED = UNFINISHED
# The only legal moves; services change status with a conditional UPDATE from these sources.
ROUND_TRANSITIONS = job_transitions(done=[RoundStatus.DONE], ended=[RoundStatus.CANCELLED, RoundStatus.FAILED])


class Round(Job):
    """One run of every variant of a group: a job of kind `round` (lab.jobs), whose answers are its outputs."""

    group = models.ForeignKey(CompareGroup, on_delete=models.CASCADE, related_name="rounds")
    number = models.PositiveIntegerField()  # 1, 2, 3 … within the group
    status = models.CharField(max_length=10, choices=RoundStatus.choices, default=RoundStatus.QUEUED)
    variables = models.JSONField(default=dict, blank=True)  # shared variables and the dataset row, as run
    dataset_row = models.ForeignKey(DatasetRow, null=True, blank=True, on_delete=models.SET_NULL, related_name="+")
    seed = models.BigIntegerField(null=True, blank=True)  # the seed sent, when the group sets one
    run_id = models.UUIDField(default=uuid.uuid4)  # shared by the rounds of one "runs" request, for progress
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    # A conversation: turn 1 has no parent; a later turn continues its parent's outputs, each column its own, with
    # `message` (the user's follow-up). Re-running a turn makes a sibling with the same parent (a branch).
    parent = models.ForeignKey("self", null=True, blank=True, on_delete=models.CASCADE, related_name="children")
    turn = models.PositiveSmallIntegerField(default=1)
    message = models.TextField(blank=True)
    # The conversation's first round (null on turn 1, which is its own root): what keys blind mode's per-voter
    # shuffle, so a column keeps its letter and place in every turn, and what a conversation vote is cast on.
    root = models.ForeignKey("self", null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    # Interactive: a single round someone started; batch: one of many (a dataset, repeats, an experiment).
    lane = models.CharField(max_length=12, choices=[(lane, lane) for lane in Lane.ALL], default=Lane.INTERACTIVE)
    # Reuse stored answers to identical calls, and store this round's complete ones (compare/response_cache.py).
    use_cache = models.BooleanField(default=False)
    error = models.TextField(blank=True)  # why the round failed or was cancelled, readable
    created_at = models.DateTimeField(auto_now_add=True)  # also its queue time (JobKind.queued_since)

    transitions = ROUND_TRANSITIONS

    class Meta:
        ordering = ["-id"]
        constraints = [
            *Job.Meta.constraints,
            # Also serves "the rounds of a group, newest first".
            models.UniqueConstraint(fields=["group", "number"], name="round_number_unique_in_group"),
            models.CheckConstraint(condition=Q(status__in=RoundStatus.values), name="round_status_valid"),
            models.CheckConstraint(condition=Q(lane__in=Lane.ALL), name="round_lane_valid"),
            models.CheckConstraint(
                condition=Q(parent__isnull=True, turn=1) | Q(parent__isnull=False, turn__gte=2),
                name="round_turn_follows_parent",
            ),
            models.CheckConstraint(
                condition=Q(parent__isnull=True, root__isnull=True) | Q(parent__isnull=False, root__isnull=False),
                name="round_root_with_parent",
            ),
        ]
        indexes = [
            *Job.Meta.indexes,
            # Progress of a multi-round run: counts by run_id.
            models.Index(fields=["run_id"], name="round_run"),
        ]

    def __str__(self) -> str:
        return f"{self.group} #{self.number}"

    @property
    def conversation_id(self) -> int:
        """The id of the conversation's first round (this round's own on turn 1)."""
        return self.root_id or self.pk


class OutputStatus(models.TextChoices):
    QUEUED = "queued", "Queued"
    RUNNING = "running", "Running"
    OK = "ok", "OK"
    ERROR = "error", "Error"
    TIMEOUT = "timeout", "Timed out"
    CANCELLED = "cancelled", "Cancelled"


OUTPUT_UNFINISHED = (OutputStatus.QUEUED, OutputStatus.RUNNING)


# Finished answers whose cost is unknown (a model without a known price, or no usage reported): every sum of costs
# leaves them out and says how many, never counting them as $0. An answer cancelled is not counted: it was never
# asked, or its partial cost was never reported.
UNPRICED = Q(cost__isnull=True, finished_at__isnull=False) & ~Q(status=OutputStatus.CANCELLED)


class OutputQuerySet(models.QuerySet):
    def unfinished(self) -> OutputQuerySet:
        return self.filter(status__in=OUTPUT_UNFINISHED)


class Output(models.Model):
    round = models.ForeignKey(Round, on_delete=models.CASCADE, related_name="outputs")
    variant = models.ForeignKey(Variant, on_delete=models.CASCADE, related_name="outputs")
    status = models.CharField(max_length=10, choices=OutputStatus.choices, default=OutputStatus.QUEUED)
    rendered_system_prompt = models.TextField(blank=True)
    rendered_prompt = models.TextField(blank=True)  # the last user message sent
    # The exact list of messages sent, rendered ([{role, content}], system first): a later turn continues from it.
    messages = models.JSONField(default=list, blank=True)
    text = models.TextField(blank=True)  # kept when the answer failed, timed out or was cancelled part-way
    html = models.TextField(blank=True)  # sanitized, rendered from `text` by lab.markdown
    error = models.TextField(blank=True)
    finish_reason = models.CharField(max_length=40, blank=True)
    # [{"id", "name", "arguments", "valid", "error"}]: the calls the answer made, checked against their tools'
    # schemas (never executed); and whether the answer is JSON valid against the response schema (None: none set).
    tool_calls = models.JSONField(default=list, blank=True)
    schema_valid = models.BooleanField(null=True, blank=True)
    # Waiting for a connection's slot, apart from the answer's own times (ttft and latency start when it is sent).
    queued_ms = models.PositiveIntegerField(null=True, blank=True)
    ttft_ms = models.PositiveIntegerField(null=True, blank=True)
    latency_ms = models.PositiveIntegerField(null=True, blank=True)
    input_tokens = models.PositiveIntegerField(null=True, blank=True)
    output_tokens = models.PositiveIntegerField(null=True, blank=True)
    tokens_estimated = models.BooleanField(default=False)
    cost = models.DecimalField(max_digits=14, decimal_places=8, null=True, blank=True)  # USD; None = unknown
    # Taken from the response cache: no call was made, so it cost 0 and has no timings (tokens are the stored ones).
    cached = models.BooleanField(default=False)
    # Every assertion passed (True), one failed (False), or none applied / not graded yet (None); the weighted
    # score as promptfoo computes it. The per-assertion results are AssertionResult rows.
    assertions_passed = models.BooleanField(null=True, blank=True)
    assertions_score = models.FloatField(null=True, blank=True)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    objects = OutputQuerySet.as_manager()

    class Meta:
        ordering = ["id"]  # creation order; order by variant__position where the variants' order matters
        constraints = [
            # Also serves "the outputs of a round".
            models.UniqueConstraint(fields=["round", "variant"], name="output_one_per_round_and_variant"),
            models.CheckConstraint(condition=Q(status__in=OutputStatus.values), name="output_status_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.round} / {self.variant.label}: {self.status}"

    @property
    def unpriced(self) -> bool:
        """Finished with no known cost (the UNPRICED rule, for an answer already read)."""
        return self.cost is None and self.finished_at is not None and self.status != OutputStatus.CANCELLED

    @property
    def is_cut_off(self) -> bool:
        """Stopped at the token limit: the text is a partial answer."""
        return self.status == OutputStatus.OK and self.finish_reason == "length"

    def judge_request(self) -> str:
        """The request this answer was written for, as a judge is shown it (its system prompt first, when there was
        one): the one text of comparisons' verdicts and experiments' evaluations."""
        if self.rendered_system_prompt:
            return f"System prompt:\n{self.rendered_system_prompt}\n\nUser prompt:\n{self.rendered_prompt}"
        return self.rendered_prompt

    def judge_skip_reason(self) -> str:
        """Why this answer cannot be judged as a whole one, or "" when it can: the one rule of comparisons'
        verdicts and experiments' evaluations."""
        if self.status != OutputStatus.OK:
            return f"{self.get_status_display()}: only complete answers are judged."
        if self.is_cut_off:
            return "Cut off at the token limit: a partial answer is not judged as if it were whole."
        return ""


class CachedAnswer(models.Model):
    """A complete answer to one exact call, kept for rounds that opt in to the cache; see compare/response_cache.py.

    Scoped to a workspace: another workspace never reads it, even for the very same call.
    """

    workspace = models.ForeignKey(Workspace, on_delete=models.CASCADE, related_name="+")
    key = models.CharField(max_length=64)  # SHA-256 (hex) of the call's canonical JSON
    text = models.TextField()
    html = models.TextField(blank=True)  # rendered once when stored, so a hit renders nothing
    finish_reason = models.CharField(max_length=40)
    input_tokens = models.PositiveIntegerField(null=True, blank=True)
    output_tokens = models.PositiveIntegerField(null=True, blank=True)
    tokens_estimated = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            # Also serves the lookup of a round's calls: workspace and key__in, one query per round.
            models.UniqueConstraint(fields=["workspace", "key"], name="cachedanswer_one_per_key_in_workspace"),
        ]
        indexes = [
            # Expiry: entries older than RESPONSE_CACHE_MAX_AGE_DAYS (response_cache_prune).
            models.Index(fields=["created_at"], name="cachedanswer_created"),
        ]

    def __str__(self) -> str:
        return f"{self.workspace_id}/{self.key[:12]}"


# Experiments keep their models beside their code; importing them here registers them with this app.
from .assertions.models import AssertionResult  # noqa: E402, F401
from .experiments.models import (  # noqa: E402, F401
    EVALUATION_UNFINISHED,
    BaselinePin,
    DatasetRunPin,
    Evaluation,
    EvaluationStatus,
    Experiment,
)
from .prompts.models import Prompt, PromptVersion  # noqa: E402, F401
