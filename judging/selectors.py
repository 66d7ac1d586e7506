"""Reads for judging: a workspace's judges, a round's verdicts as a person may see them, a judge's diagnostics,
and the judge's choice per round that the voting side compares with the team's votes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from decimal import Decimal

from django.db.models import Count, Prefetch, QuerySet, Sum
from scipy.stats import binomtest, spearmanr

from compare.blind import labels_visible, outputs_as_seen_by
from compare.models import UNPRICED, Round
from lab.models import Connection, ConnectionKind, Workspace
from lab.stats.intervals import ALPHA

from .judgement import ONLY_ANSWER
from .models import GroupJudge, JudgeConfig, Verdict, VerdictOutput, VerdictStatus

MIN_VERBOSITY_SAMPLE = 5  # fewer answers give a correlation too noisy to print


def judges_of(workspace: Workspace) -> QuerySet[JudgeConfig]:
    return JudgeConfig.objects.filter(workspace=workspace).order_by("name", "id")


def group_judge_id(group_id: int) -> int | None:
    return GroupJudge.objects.filter(group_id=group_id).values_list("judge_id", flat=True).first()


def round_verdicts(round_: Round) -> list[Verdict]:
    """The round's verdicts, newest first, with their answers (best first, skipped ones last)."""
    outputs = VerdictOutput.objects.select_related("output__variant").order_by(
        "-judged", "rank", "output__variant__position"
    )
    return list(
        Verdict.objects.filter(round=round_)
        .select_related("winner")
        .prefetch_related(Prefetch("outputs", queryset=outputs))
    )


def verdicts_as_seen_by(round_: Round, user) -> tuple[list[Verdict], bool]:
    """The round's verdicts as this person may see them, and whether they are hidden: in blind mode, until they
    have voted (compare.blind), none, since the judge's view would sway theirs."""
    hidden = not labels_visible(round_, user)
    return ([] if hidden else round_verdicts(round_)), hidden


@dataclass
class PanelRow:
    label: str  # as this person may see it (blind mode: "Answer B" until they vote)
    entry: VerdictOutput
    is_winner: bool
    cells: list[dict | None]  # per metric column: {"raw", "scaled", "reason"}, or None (not judged on it)


@dataclass
class PanelVerdict:
    verdict: Verdict
    rows: list[PanelRow]
    columns: list[tuple[str, float | None]]  # (metric, weight after renormalising): judged first, then left out
    winner_label: str


@dataclass
class Panel:
    round: Round
    verdicts: list[PanelVerdict]
    hidden: bool  # blind mode before this person voted: the judge's view would sway theirs
    answers_cost: Decimal | None  # of the answers whose cost is known
    judge_cost: Decimal | None  # of the verdicts whose cost is known
    answers_unpriced: int = 0  # finished answers whose cost is unknown: not in answers_cost
    judge_unpriced: int = 0  # verdicts that made calls whose cost is unknown: not in judge_cost

    @property
    def pending(self) -> bool:
        return any(not item.verdict.is_finished for item in self.verdicts)


def verdict_panel(round_: Round, user) -> Panel:
    """Everything the verdict panel under a round shows to `user`."""
    outputs, _ = outputs_as_seen_by(round_, user)
    label_of = {output.pk: output.seen.label for output in outputs}
    verdicts, hidden = verdicts_as_seen_by(round_, user)
    panel_verdicts = []
    for verdict in verdicts:
        metrics = list(verdict.weights) + [m["name"] for m in verdict.missing_metrics]
        rows = [
            PanelRow(
                label=label_of.get(entry.output_id, "?"),
                entry=entry,
                is_winner=entry.output_id == verdict.winner_id,
                cells=[entry.scores.get(name) for name in metrics],
            )
            for entry in verdict.outputs.all()
        ]
        winner_label = label_of.get(verdict.winner_id, "") if verdict.winner_id else ""
        columns = [(name, verdict.weights.get(name)) for name in metrics]
        panel_verdicts.append(PanelVerdict(verdict, rows, columns, winner_label))
    answers = round_.outputs.aggregate(
        total=Sum("cost"),
        unpriced=Count("pk", filter=UNPRICED),
    )
    judge_costs = [v.cost for v in verdicts if v.cost is not None]
    return Panel(
        round=round_,
        verdicts=panel_verdicts,
        hidden=hidden,
        answers_cost=answers["total"],
        judge_cost=sum(judge_costs, Decimal(0)) if judge_costs else None,
        answers_unpriced=answers["unpriced"],
        judge_unpriced=sum(1 for v in verdicts if v.cost is None and v.judge_calls),
    )


@dataclass(frozen=True)
class JudgedRoundChoice:
    """The judge's choice in one round: the outputs in the order the round shows them, and its winner (None: tie)."""

    round_id: int
    shown: tuple[int, ...]
    winner: int | None


def judge_round_choices(judge: JudgeConfig) -> list[JudgedRoundChoice]:
    """Per round the judge decided (a comparison, not a walkover), what it chose: what voting's agreement reads."""
    verdicts = (
        Verdict.objects.filter(judge=judge, status=VerdictStatus.DONE)
        .exclude(decided_by=ONLY_ANSWER)
        .prefetch_related("round__outputs__variant")
        .order_by("round_id")
    )
    return [
        JudgedRoundChoice(
            round_id=verdict.round_id,
            shown=tuple(o.pk for o in sorted(verdict.round.outputs.all(), key=lambda o: o.variant.position)),
            winner=verdict.winner_id,
        )
        for verdict in verdicts
    ]


@dataclass(frozen=True)
class PositionBias:
    """How the judge's pairwise answers moved when the order of the two answers was swapped.

    A flip between the two answers has a direction: the judge picked whichever came first both times
    (`first_favoured`) or whichever came second both times (`second_favoured`). A change to or from a tie
    (`tie_changes`) has none and is kept apart. `p_value` is the two-sided exact sign test (scipy `binomtest`)
    of first- against second-position flips: "neither position is favoured"; None without directed flips.
    """

    judgements: int  # pairwise judgements asked in both orders with both replies usable
    flipped: int  # of those, how many changed their answer when the order was swapped
    first_favoured: int = 0
    second_favoured: int = 0
    tie_changes: int = 0
    p_value: float | None = None

    @property
    def share(self) -> float | None:
        return self.flipped / self.judgements if self.judgements else None

    @property
    def favoured(self) -> str | None:
        """ "first" or "second" when flips lean one way significantly (p < α), else None."""
        if self.p_value is None or self.p_value >= ALPHA:
            return None
        return "first" if self.first_favoured > self.second_favoured else "second"


def position_bias(records: list[dict]) -> PositionBias:
    """Position bias over pairwise records (engine `_pair_record`: `first` is shown first in call 1 and second in
    call 2; `call_1`, `call_2` are the picks, an output id or "tie"); records with an unreadable call are skipped."""
    usable = [r for r in records if r.get("call_1") is not None and r.get("call_2") is not None]
    first = sum(r["call_1"] == r["first"] and r["call_2"] == r["second"] for r in usable)
    second = sum(r["call_1"] == r["second"] and r["call_2"] == r["first"] for r in usable)
    flipped = sum(r["call_1"] != r["call_2"] for r in usable)
    directed = first + second
    return PositionBias(
        judgements=len(usable),
        flipped=flipped,
        first_favoured=first,
        second_favoured=second,
        tie_changes=flipped - directed,
        p_value=float(binomtest(first, directed, 0.5).pvalue) if directed else None,
    )


@dataclass(frozen=True)
class Verbosity:
    answers: int
    rho: float | None  # Spearman's rank correlation of score with answer length (characters)
    p_value: float | None

    @property
    def reading(self) -> str:
        """What the correlation says, in words: a tendency only when Spearman's test is significant (p < α)."""
        if self.rho is None:
            return ""
        if self.p_value >= ALPHA or self.rho == 0:
            return "no clear tendency either way yet"
        return f"{'longer' if self.rho > 0 else 'shorter'} answers tend to score higher"


@dataclass(frozen=True)
class Diagnostics:
    verdicts: int
    failed: int
    ties: int
    position_bias: PositionBias
    verbosity: Verbosity
    calls: int
    cost: Decimal | None


def judge_diagnostics(judge: JudgeConfig) -> Diagnostics:
    """Position bias (flips under swapping), verbosity (score vs length) and totals over the judge's verdicts."""
    verdicts = list(
        Verdict.objects.filter(judge=judge).finished().only("status", "tie", "pairs", "judge_calls", "cost")
    )
    done = [v for v in verdicts if v.status == VerdictStatus.DONE]
    costs = [v.cost for v in verdicts if v.cost is not None]
    return Diagnostics(
        verdicts=len(done),
        failed=len(verdicts) - len(done),
        ties=sum(v.tie for v in done),
        position_bias=position_bias([record for verdict in done for record in verdict.pairs]),
        verbosity=_verbosity(judge),
        calls=sum(v.judge_calls for v in verdicts),
        cost=sum(costs, Decimal(0)) if costs else None,
    )


def _verbosity(judge: JudgeConfig) -> Verbosity:
    rows = list(
        VerdictOutput.objects.filter(
            verdict__judge=judge, verdict__status=VerdictStatus.DONE, score__isnull=False
        ).values_list("score", "output__text")
    )
    if len(rows) < MIN_VERBOSITY_SAMPLE:
        return Verbosity(answers=len(rows), rho=None, p_value=None)
    scores = [score for score, _ in rows]
    lengths = [len(text) for _, text in rows]
    result = spearmanr(lengths, scores)
    rho, p_value = float(result.statistic), float(result.pvalue)
    if math.isnan(rho):  # every score (or every length) the same: no correlation to speak of
        return Verbosity(answers=len(rows), rho=None, p_value=None)
    return Verbosity(answers=len(rows), rho=rho, p_value=p_value)


def judge_model_choices(workspace: Workspace) -> list[str]:
    """The judge editor's model suggestions: ids from the catalogs already fetched (the page must not wait on
    providers), simulated connections left out (their canned answers cannot judge)."""
    connections = Connection.objects.filter(workspace=workspace).exclude(kind=ConnectionKind.SIMULATED)
    return [
        f"{name}::{entry['id']}"
        for name, cache in connections.values_list("name", "models_cache")
        for entry in cache or []
    ]
