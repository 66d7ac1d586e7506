"""A classification judge's categories on a comparison: per variant, the share of its answers in each category,
with Wilson intervals (the one interval of lab.stats.winrate). Read from the comparison's classification
judge (its own, else the one that classified most of its rounds); None when none has."""

from __future__ import annotations

from collections import Counter

from django.db.models import Count

from compare.models import CompareGroup
from judging.classification import UNKNOWN
from judging.models import JudgeConfig, VerdictOutput, VerdictStatus
from judging.selectors import group_judge_id
from lab.stats.winrate import wilson_interval


def group_category_shares(group: CompareGroup) -> dict | None:
    judge = _classification_judge(group)
    if judge is None:
        return None
    rows = VerdictOutput.objects.filter(
        verdict__round__group=group, verdict__judge=judge, verdict__status=VerdictStatus.DONE, judged=True
    ).exclude(category="")
    counts: dict[int, Counter] = {}
    for variant_id, category in rows.values_list("output__variant_id", "category"):
        counts.setdefault(variant_id, Counter())[category] += 1
    classifier = judge.classifier()
    categories = classifier.labels
    variants = []
    for variant in group.variants.order_by("position"):
        seen = counts.get(variant.pk, Counter())
        total = sum(seen.values())
        shares = []
        for category in categories:
            n = seen.get(category, 0)
            low, high = wilson_interval(n, total) if total else (None, None)
            shares.append(
                {
                    "category": category,
                    "count": n,
                    "share": n / total if total else None,
                    "ci_low": low,
                    "ci_high": high,
                }
            )
        variants.append({"variant": variant.pk, "label": variant.label, "answers": total, "shares": shares})
    return {
        "judge": {"id": judge.pk, "name": judge.name, "model": judge.model, "kind": judge.kind},
        "categories": [c for c in categories if c != UNKNOWN or classifier.uncertainty == "unknown"],
        "variants": variants,
    }


def _classification_judge(group: CompareGroup) -> JudgeConfig | None:
    own = group_judge_id(group.pk)
    if own is not None:
        judge = JudgeConfig.objects.filter(pk=own).first()
        if judge is not None and judge.classifies:
            return judge
    busiest = (
        VerdictOutput.objects.filter(verdict__round__group=group, verdict__status=VerdictStatus.DONE)
        .exclude(category="")
        .values("verdict__judge_id")
        .annotate(n=Count("id"))
        .order_by("-n", "verdict__judge_id")
        .first()
    )
    return JudgeConfig.objects.filter(pk=busiest["verdict__judge_id"]).first() if busiest else None
