"""The one place the report reads judge verdicts: which judge's scores a comparison's report uses, and a stamp
that changes whenever those verdicts do (part of the report's cache key).

Kept apart so a change in how judging stores verdicts touches only this file.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.db.models import Count, Max

from compare.models import CompareGroup
from judging.models import JudgeConfig, Verdict, VerdictOutput, VerdictStatus
from judging.selectors import group_judge_id


@dataclass(frozen=True)
class JudgeScores:
    """One judge's weighted scores (0–1) on a comparison: variant id → {round id: score}, rounds in id order."""

    judge: JudgeConfig
    scores: dict[int, dict[int, float]]

    def describe(self) -> dict:
        rounds = {round_id for by_round in self.scores.values() for round_id in by_round}
        return {"id": self.judge.pk, "name": self.judge.name, "model": self.judge.model, "rounds": len(rounds)}


def _done_verdicts(group: CompareGroup):
    return Verdict.objects.filter(round__group=group, status=VerdictStatus.DONE, judge__isnull=False)


def report_judge_id(group: CompareGroup) -> int | None:
    """The comparison's own judge when it names one, else the judge that has scored most of its rounds: scores of
    different judges are never mixed, since each judge reads a scale its own way."""
    own = group_judge_id(group.pk)
    if own is not None:
        return own
    busiest = _done_verdicts(group).values("judge_id").annotate(n=Count("id")).order_by("-n", "judge_id").first()
    return busiest["judge_id"] if busiest else None


def group_judge_scores(group: CompareGroup) -> JudgeScores | None:
    """The chosen judge's scores per variant and round, or None when it has scored nothing here yet."""
    judge_id = report_judge_id(group)
    if judge_id is None:
        return None
    rows = VerdictOutput.objects.filter(
        verdict__round__group=group,
        verdict__judge_id=judge_id,
        verdict__status=VerdictStatus.DONE,
        judged=True,
        score__isnull=False,
    ).values_list("output__variant_id", "verdict__round_id", "score")
    # Rounds in order: the seeded bootstrap of the means resamples by position, so a fixed order keeps it repeatable.
    rows = rows.order_by("verdict__round_id", "output_id")
    scores: dict[int, dict[int, float]] = {}
    for variant_id, round_id, score in rows:
        scores.setdefault(variant_id, {})[round_id] = score
    if not scores:
        return None
    return JudgeScores(judge=JudgeConfig.objects.get(pk=judge_id), scores=scores)


def verdicts_stamp(group: CompareGroup) -> str:
    """Changes when a verdict on the comparison finishes, is redone, or its judge changes. Judging writes verdicts
    with conditional UPDATEs (no save signals), so the report's cache key reads this one cheap aggregate."""
    figures = _done_verdicts(group).aggregate(n=Count("id"), last=Max("finished_at"), newest=Max("id"))
    return f"{group_judge_id(group.pk)}-{figures['n']}-{figures['newest']}-{figures['last']}"
