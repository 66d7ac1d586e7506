"""The baseline comparison as the command line prints it: the verdict block and one line per paired answer."""

from __future__ import annotations

from .baseline import BaselineComparison, PairChange
from .report import count, table

MAX_ROWS = 50  # per-row lines printed; the page shows them all


def _score(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _change(pair: PairChange) -> str:
    change = pair.change
    return "-" if change is None else f"{change:+.3f}"


def _answer(pair: PairChange) -> str:
    if pair.baseline is None:
        return "new in this run"
    if pair.current is None:
        return "only in the baseline"
    if pair.diff is None or not pair.diff.changed:
        return "same"
    return f"changed (+{pair.diff.inserted_words} / -{pair.diff.deleted_words} words)"


def baseline_text(comparison: BaselineComparison, *, url: str) -> str:
    base, test = comparison.baseline, comparison.test
    means = "-"
    if comparison.baseline_mean is not None:
        means = (
            f"{comparison.baseline_mean:.3f} → {comparison.current_mean:.3f} "
            f"({comparison.current_mean - comparison.baseline_mean:+.3f})"
        )
    lines = [
        "Baseline",
        f'  Baseline run   comparison {base.group_id} "{base.group.title}"',
        f"  Score          {comparison.score_description}, paired by dataset row and combination",
        f"  Pairs          {test.n_pairs} scored, {comparison.unmatched} unmatched",
        f"  Answers        {comparison.changed_answers} of {count(len(comparison.pairs), 'pair')} changed",
        f"  Mean score     {means}",
        f"  Verdict        {comparison.sentence}",
        f"  Details        {url}",
        "",
    ]
    rows = [
        (
            pair.row,
            pair.combination,
            _score(pair.baseline_score),
            _score(pair.current_score),
            _change(pair),
            _answer(pair),
        )
        for pair in comparison.pairs[:MAX_ROWS]
    ]
    lines.append(table(("Row", "Combination", "Baseline", "Now", "Change", "Answer"), rows))
    if len(comparison.pairs) > MAX_ROWS:
        lines.append(f"… and {len(comparison.pairs) - MAX_ROWS} more pairs (on the page).")
    return "\n".join(lines)
