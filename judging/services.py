"""Writes for judging: judge configurations, the judge a comparison names, and requests to judge a round.

Every rule lives here and fails as a Django ValidationError keyed by the field to correct. The worker's side
of a verdict (claim, judge, record) is in `verdicts.py`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from compare.models import CompareGroup, OutputStatus, Round
from lab.jobs.enqueue import enqueue_on_commit
from lab.models import Connection, Workspace
from lab.templating import variant_name

from .calls import judge_model_resolve
from .classification import JudgeKind, classifier_check
from .families import Candidate, family_conflicts
from .models import VERDICT_JOB, GroupJudge, JudgeConfig, Verdict, VerdictOutput, VerdictStatus
from .rubric import DEFAULT_METRICS, ConversationScope, JudgeMode, rubric_check

MAX_SEED = 2**62


def _config_fields(
    *,
    workspace: Workspace,
    name: str,
    model: str,
    scale: str,
    mode: str,
    metrics,
    prompt: str,
    seed,
    lenient_replies: bool = False,
    kind: str = JudgeKind.RUBRIC,
    classification: Mapping[str, Any] | None = None,
    input_columns: Iterable[str] | None = None,
    conversation: str = ConversationScope.LAST_TURN,
) -> dict[str, Any]:
    """Checked, normalised fields of a judge configuration; one ValidationError lists every problem."""
    errors: dict[str, list[str]] = {}
    name = (name or "").strip()
    if not name:
        errors["name"] = ["Give the judge a name."]
    if mode not in JudgeMode.values:
        errors["mode"] = [f"The mode is one of: {', '.join(JudgeMode.values)}."]
    if conversation not in ConversationScope.values:
        errors["conversation"] = [f"Judge one of: {', '.join(ConversationScope.values)}."]
    if seed is not None and not (isinstance(seed, int) and 0 <= seed < MAX_SEED):
        errors["seed"] = [f"A seed is a whole number from 0 to {MAX_SEED - 1}, or empty for a fresh one each time."]
    metrics = [m.as_dict() for m in DEFAULT_METRICS] if metrics is None else list(metrics)
    try:
        rubric = rubric_check(scale=scale, metrics=metrics, prompt=prompt or "")
    except ValidationError as exc:
        errors.update(exc.message_dict)
        rubric = None
    try:
        if judge_model_resolve(workspace=workspace, model_id=model or "").private:
            # A judge is the team's: it may not spend one person's own key.
            errors["model"] = ["A judge cannot use a connection private to one person (made from their environment)."]
    except ValidationError as exc:
        errors.update(exc.message_dict)
    classifier = None
    if kind not in JudgeKind.values:
        errors["kind"] = [f"The kind is one of: {', '.join(JudgeKind.values)}."]
    elif kind != JudgeKind.RUBRIC:
        try:
            classifier = classifier_check(kind=kind, data=classification or {}, input_columns=list(input_columns or []))
        except ValidationError as exc:
            errors.update(exc.message_dict)
    if errors:
        raise ValidationError(errors)
    return {
        "name": name,
        "model": model.strip(),
        "scale": scale,
        "mode": mode,
        "metrics": [metric.as_dict() for metric in rubric.metrics],
        "prompt": rubric.prompt,
        "seed": seed,
        "lenient_replies": bool(lenient_replies),
        "kind": kind,
        "classification": classifier.as_data() if classifier else {},
        "input_columns": list(classifier.input_columns) if classifier else [],
        "conversation": conversation,
    }


def _save(judge: JudgeConfig) -> JudgeConfig:
    try:
        with transaction.atomic():
            judge.save()
    except IntegrityError:
        raise ValidationError({"name": "This workspace already has a judge with this name."}) from None
    return judge


@transaction.atomic
def judge_config_create(
    *,
    workspace: Workspace,
    user,
    name: str,
    model: str,
    scale: str = "1-5",
    mode: str = JudgeMode.RELATIVE,
    metrics: Iterable[Mapping[str, Any]] | None = None,
    prompt: str = "",
    seed: int | None = None,
    lenient_replies: bool = False,
    kind: str = JudgeKind.RUBRIC,
    classification: Mapping[str, Any] | None = None,
    input_columns: Iterable[str] | None = None,
    conversation: str = ConversationScope.LAST_TURN,
) -> JudgeConfig:
    """A judge for the workspace; without metrics it gets the default rubric of five."""
    fields = _config_fields(
        workspace=workspace,
        name=name,
        model=model,
        scale=scale,
        mode=mode,
        metrics=metrics,
        prompt=prompt,
        seed=seed,
        lenient_replies=lenient_replies,
        kind=kind,
        classification=classification,
        input_columns=input_columns,
        conversation=conversation,
    )
    return _save(JudgeConfig(workspace=workspace, created_by=user, **fields))


@transaction.atomic
def judge_config_update(*, judge: JudgeConfig, **changes: Any) -> JudgeConfig:
    """Change any of name, model, scale, mode, metrics, prompt, seed; verdicts already given keep their snapshot."""
    current = {
        "name": judge.name,
        "model": judge.model,
        "scale": judge.scale,
        "mode": judge.mode,
        "metrics": judge.metrics,
        "prompt": judge.prompt,
        "seed": judge.seed,
        "lenient_replies": judge.lenient_replies,
        "kind": judge.kind,
        "classification": judge.classification,
        "input_columns": judge.input_columns,
        "conversation": judge.conversation,
    }
    unknown = set(changes) - set(current)
    if unknown:
        raise ValidationError({"non_field_errors": f"Unknown fields: {', '.join(sorted(unknown))}."})
    fields = _config_fields(workspace=judge.workspace, **(current | changes))
    for key, value in fields.items():
        setattr(judge, key, value)
    return _save(judge)


@transaction.atomic
def judge_config_delete(*, judge: JudgeConfig) -> None:
    """Remove a judge; comparisons naming it stop being judged, its verdicts stay (with their snapshot)."""
    judge.delete()


def group_candidates(group: CompareGroup) -> list[Candidate]:
    """The models of a comparison's variants, as the family check sees them."""
    kinds = dict(Connection.objects.filter(workspace_id=group.workspace_id).values_list("name", "kind"))
    return [
        Candidate(
            name=variant_name(variant.position, variant.label),
            model_id=variant.model,
            kind=kinds.get(variant.model.split("::", 1)[0], ""),
        )
        for variant in group.variants.order_by("position")
    ]


def check_judge_may_grade(*, judge: JudgeConfig, group: CompareGroup, allow_same_family: bool | None = None) -> None:
    """The judge must belong to the group's workspace and share no model family with any of its variants, unless
    the family rule was overridden (`allow_same_family`; by default, the override recorded on the group's judge)."""
    if judge.workspace_id != group.workspace_id:
        raise ValidationError({"judge": "No such judge in this workspace."})
    try:
        judge_model = judge_model_resolve(workspace=group.workspace, model_id=judge.model)
    except ValidationError as exc:
        raise ValidationError({"judge": [f"The judge {judge.name} cannot run: {' '.join(exc.messages)}"]}) from None
    conflicts = family_conflicts(judge_model.model_id, judge_model.kind, group_candidates(group))
    if allow_same_family is None:
        allow_same_family = family_overridden(group=group, judge=judge)
    if conflicts and not allow_same_family:
        override = (
            "To judge anyway, tick “Judge even if it shares a family” (in the API: name it as the comparison's judge "
            "with allow_same_family); the override is recorded."
        )
        raise ValidationError({"judge": [*conflicts, override]})


def family_overridden(*, group: CompareGroup, judge: JudgeConfig) -> bool:
    return GroupJudge.objects.filter(group=group, judge=judge, family_override_at__isnull=False).exists()


@transaction.atomic
def group_judge_set(
    *, group: CompareGroup, judge: JudgeConfig | None, allow_same_family: bool = False, user=None
) -> GroupJudge | None:
    """Name the judge of a comparison (None: no automatic judging); it must be allowed to grade every variant.

    `allow_same_family` overrides the family rule for this comparison and judge, recording who did it and when.
    """
    if judge is None:
        GroupJudge.objects.filter(group=group).delete()
        return None
    check_judge_may_grade(judge=judge, group=group, allow_same_family=allow_same_family)
    override = {"family_override_by": user, "family_override_at": timezone.now()} if allow_same_family else {}
    defaults = {"judge": judge, "family_override_by": None, "family_override_at": None, **override}
    link, _ = GroupJudge.objects.update_or_create(group=group, defaults=defaults)
    return link


def group_judge_of(group: CompareGroup) -> JudgeConfig | None:
    link = GroupJudge.objects.filter(group=group).select_related("judge").first()
    return link.judge if link else None


def round_judges(round_ids: list[int]) -> dict[int, JudgeConfig]:
    """The judge each of these rounds' comparisons names, by round id; rounds without one are left out."""
    named = dict(
        GroupJudge.objects.filter(group__rounds__in=round_ids).values_list("group__rounds", "judge_id").distinct()
    )
    if not named:
        return {}
    judges = JudgeConfig.objects.in_bulk(set(named.values()))
    return {round_id: judges[judge_id] for round_id, judge_id in sorted(named.items())}


def _check_round(round_: Round) -> None:
    if not round_.is_finished:
        raise ValidationError({"round": "This round is still running; judge it once its answers are in."})
    if not round_.outputs.filter(status=OutputStatus.OK).exists():
        raise ValidationError({"round": "This round has no complete answer to judge."})


def _snapshot(judge: JudgeConfig) -> dict[str, Any]:
    return {"judge_name": judge.name, "judge_model": judge.model, "scale": judge.scale, "mode": judge.mode}


@transaction.atomic
def verdict_request(*, round: Round, user, judge: JudgeConfig | None = None) -> Verdict:
    """Judge a finished round now, with `judge` or else the comparison's judge; the work runs in a task.

    Asking again re-judges a finished verdict; a verdict already queued or running is returned as it is.
    """
    group = round.group
    judge = judge or group_judge_of(group)
    if judge is None:
        raise ValidationError({"judge": "This comparison names no judge; choose one."})
    check_judge_may_grade(judge=judge, group=group)
    _check_round(round)
    verdict, created = Verdict.objects.select_for_update().get_or_create(
        round=round, judge=judge, defaults={**_snapshot(judge), "requested_by": user, "enqueued_at": timezone.now()}
    )
    if not created:
        in_progress = not verdict.is_finished and not Verdict.objects.overdue().filter(pk=verdict.pk).exists()
        if in_progress:
            return verdict
        _reset(verdict, judge, user)
    _enqueue(verdict)
    return verdict


def _reset(verdict: Verdict, judge: JudgeConfig, user) -> None:
    """Back to queued with nothing of the last judgement left, so the next one starts clean."""
    VerdictOutput.objects.filter(verdict=verdict).delete()
    fields = {
        **_snapshot(judge),
        "status": VerdictStatus.QUEUED,
        "winner": None,
        "tie": False,
        "decided_by": "",
        "seed": None,
        "letters": {},
        "weights": {},
        "missing_metrics": [],
        "skipped": [],
        "pairs": [],
        "calls": [],
        "judge_calls": 0,
        "input_tokens": 0,
        "output_tokens": 0,
        "cost": None,
        "error": "",
        "requested_by": user,
        "requested_at": timezone.now(),
        "enqueued_at": timezone.now(),
        "started_at": None,
        "finished_at": None,
        "deadline": None,
    }
    Verdict.objects.filter(pk=verdict.pk).update(**fields)
    for key, value in fields.items():
        setattr(verdict, key, value)


def _enqueue(verdict: Verdict) -> None:
    enqueue_on_commit(VERDICT_JOB, verdict.pk)


def verdict_for_finished_round(*, round_id: int) -> Verdict | None:
    """The automatic verdict of a round whose comparison names a judge: created queued once, never twice."""
    verdicts = verdicts_for_finished_rounds(round_ids=[round_id])
    return verdicts[0] if verdicts else None


@transaction.atomic(savepoint=False)  # inside the rounds' finish: no savepoint of its own, two queries fewer
def verdicts_for_finished_rounds(*, round_ids: list[int]) -> list[Verdict]:
    """The automatic verdicts of those of these rounds whose comparison names a judge (`verdict_for_finished_round`).

    Most finished rounds have no judge (every experiment's): that is one query for all of them, asked before any
    round is read.
    """
    return [_verdict_for_round(round_id, judge) for round_id, judge in round_judges(round_ids).items()]


def _verdict_for_round(round_id: int, judge: JudgeConfig) -> Verdict:
    """Created queued once, never twice. A rule that forbids judging (a same-family judge, no complete answer) is
    recorded as a failed verdict, so the panel says why there is none."""
    round_ = Round.objects.select_related("group__workspace").get(pk=round_id)
    queued = {**_snapshot(judge), "enqueued_at": timezone.now()}  # its caller enqueues it once this commits
    verdict, created = Verdict.objects.get_or_create(round=round_, judge=judge, defaults=queued)
    if not created:
        return verdict  # a redelivered message, or someone asked already
    try:
        check_judge_may_grade(judge=judge, group=round_.group)
        _check_round(round_)
    except ValidationError as exc:
        now = timezone.now()
        Verdict.objects.transition(verdict.pk, VerdictStatus.FAILED, error=" ".join(exc.messages), finished_at=now)
        verdict.refresh_from_db()
    return verdict
