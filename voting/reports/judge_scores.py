"""The one place the report reads judge scores: which judge's scores a comparison's report uses, and a stamp
that changes whenever they do (part of the report's cache key).

Scores come from judging's verdicts, or, for an experiment, from the pointwise evaluation its file asked for
(compare's `Evaluation`); both are weighted scores from 0 to 1. Kept apart so a change in how either is stored
touches only this file.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from django.db.models import Count, Max

from compare.experiments.models import Evaluation, EvaluationStatus, Experiment
from compare.models import CompareGroup, Mode
from judging.models import JudgeConfig, Verdict, VerdictOutput, VerdictStatus
from judging.selectors import group_judge_id


@dataclass(frozen=True)
class JudgeScores:
    """One judge's weighted scores (0–1) on a comparison: variant id → {round id: score}, rounds in id order.
    `judge` says where they come from: a judge configuration's id, name and model (id None for an experiment's
    own evaluation, which has no configuration)."""

    judge: dict
    scores: dict[int, dict[int, float]]
    # Rounds judged on another set of metrics (one was dropped), left out so like is compared with like:
    # [{"rounds": 2, "without": ["Accuracy"]}].
    left_out: list[dict] = field(default_factory=list)

    def describe(self) -> dict:
        rounds = {round_id for by_round in self.scores.values() for round_id in by_round}
        return {**self.judge, "rounds": len(rounds), "left_out": self.left_out}


def _done_verdicts(group: CompareGroup):
    return Verdict.objects.filter(round__group=group, status=VerdictStatus.DONE, judge__isnull=False)


def _busiest_judge_id(group: CompareGroup) -> int | None:
    busiest = _done_verdicts(group).values("judge_id").annotate(n=Count("id")).order_by("-n", "judge_id").first()
    return busiest["judge_id"] if busiest else None


def group_judge_scores(group: CompareGroup) -> JudgeScores | None:
    """The scores the report uses, per variant and round, or None when nothing has scored the answers yet.

    In order: the comparison's own judge; an experiment's evaluation (its file names the judge); else the judge
    that has scored most of its rounds. Scores of different judges are never mixed, since each judge reads a scale
    its own way.
    """
    own = group_judge_id(group.pk)
    if own is None and (evaluated := _evaluation_scores(group)) is not None:
        return evaluated
    judge_id = own if own is not None else _busiest_judge_id(group)
    if judge_id is None:
        return None
    verdicts, left_out = _like_with_like(group, judge_id)
    rows = VerdictOutput.objects.filter(
        verdict__in=verdicts,
        verdict__round__group=group,
        verdict__judge_id=judge_id,
        verdict__status=VerdictStatus.DONE,
        judged=True,
        score__isnull=False,
    ).values_list("output__variant_id", "verdict__round_id", "score")
    # Rounds in order, so reads repeat; the report also sorts each variant's scores before its seeded bootstrap.
    rows = rows.order_by("verdict__round_id", "output_id")
    scores = _by_variant(rows)
    if not scores:
        return None
    judge = JudgeConfig.objects.get(pk=judge_id)
    return JudgeScores(
        judge={"id": judge.pk, "name": judge.name, "model": judge.model}, scores=scores, left_out=left_out
    )


def _like_with_like(group: CompareGroup, judge_id: int) -> tuple[list[int], list[dict]]:
    """The verdicts judged on one set of metrics, the set most rounds were judged on (the full one on a tie), and
    what the other sets' rounds were judged without: a score without Accuracy is not the same measure as one with."""
    done = _done_verdicts(group).filter(judge_id=judge_id).values_list("pk", "missing_metrics")
    by_set: dict[frozenset[str], list[int]] = {}
    for pk, missing in done:
        dropped = frozenset(str(m.get("name", "")) for m in missing or [] if isinstance(m, dict))
        by_set.setdefault(dropped, []).append(pk)
    if not by_set:
        return [], []
    sizes = Counter({key: len(pks) for key, pks in by_set.items()})
    kept = max(sizes, key=lambda key: (sizes[key], -len(key), sorted(key)))
    left_out = [
        {"rounds": len(by_set[key]), "without": sorted(key - kept), "only_with": sorted(kept - key)}
        for key in sorted(by_set, key=lambda key: (-sizes[key], sorted(key)))
        if key != kept
    ]
    return by_set[kept], left_out


def _evaluation_scores(group: CompareGroup) -> JudgeScores | None:
    """An experiment's pointwise evaluation of its answers, when it asked for one and some are scored."""
    if group.mode != Mode.CUSTOM:  # only experiments make custom comparisons
        return None
    experiment = Experiment.objects.filter(group=group).only("config").first()
    if experiment is None:
        return None
    rows = (
        Evaluation.objects.filter(experiment=experiment, status=EvaluationStatus.DONE, score__isnull=False)
        .values_list("output__variant_id", "output__round_id", "score")
        .order_by("output__round_id", "output_id")
    )
    scores = _by_variant(rows)
    if not scores:
        return None
    spec = experiment.config.get("evaluation") or {}
    name = f"the experiment's evaluation ({spec['type']})" if spec.get("type") else "the experiment's evaluation"
    return JudgeScores(judge={"id": None, "name": name, "model": spec.get("model", "")}, scores=scores)


def _by_variant(rows: Iterable[tuple[int, int, float]]) -> dict[int, dict[int, float]]:
    """(variant id, round id, score) rows as variant id → {round id: score}, keeping the rows' round order."""
    scores: dict[int, dict[int, float]] = {}
    for variant_id, round_id, score in rows:
        scores.setdefault(variant_id, {})[round_id] = score
    return scores


def judge_scores_stamp(group: CompareGroup) -> str:
    """Changes when a verdict on the comparison finishes, is redone, or its judge changes, and when an experiment's
    evaluation finishes. Both are written with conditional UPDATEs (no save signals), so the report's cache key
    reads these cheap aggregates."""
    figures = _done_verdicts(group).aggregate(n=Count("id"), last=Max("finished_at"), newest=Max("id"))
    stamp = f"{group_judge_id(group.pk)}-{figures['n']}-{figures['newest']}-{figures['last']}"
    if group.mode != Mode.CUSTOM:  # a cached report is served on every view: no query that cannot change it
        return stamp
    evaluated = Evaluation.objects.filter(experiment__group=group, status=EvaluationStatus.DONE).aggregate(
        n=Count("id"), last=Max("finished_at")
    )
    return f"{stamp}-{evaluated['n']}-{evaluated['last']}"
