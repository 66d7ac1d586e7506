"""Judging a set of answers: letters, calls in the configured mode, scores scaled and weighted, the winner.

Async and free of the ORM: the services hand it the answers to judge and store what it returns. Every random
choice (letters, the order in each call, which answer a pair shows first) is drawn from the `rng` it is given,
up front and in a fixed sequence, so a seed reproduces a verdict however the concurrent calls interleave.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from itertools import combinations

from .calls import Ask, JudgeClient
from .prompts import (
    TIE,
    Shown,
    head_to_head_prompt,
    letter_for,
    pairwise_prompt,
    pointwise_prompt,
    relative_prompt,
)
from .replies import Picked, Read, Scored, read_letter_scores, read_metric_scores, read_metric_winners, read_winner
from .rubric import JudgeMode, Metric, Rubric, nothing_judged, weighted_score, weights_over

CLOSE_CALL = 0.15  # top two this close (on 0–1) go to a head-to-head call
ONLY_ANSWER, SCORES, HEAD_TO_HEAD = "only_answer", "scores", "head_to_head"


@dataclass(frozen=True)
class Candidate:
    """An answer to judge: its output id (never shown), the request it answered and its text."""

    output_id: int
    prompt: str
    text: str
    reference: str = ""  # the round's reference answer (its dataset row's `reference`), shown to the judge


@dataclass(frozen=True)
class MetricScore:
    raw: int | None  # on the rubric's scale; None in pairwise mode, where scores are shares of pairs won
    scaled: float  # 0–1
    reason: str


@dataclass
class Judgement:
    letters: dict[str, int]  # letter → output id
    scores: dict[int, dict[str, MetricScore]] = field(default_factory=dict)  # output → metric → score
    totals: dict[int, float] = field(default_factory=dict)  # output → weighted score, 0–1
    weights: dict[str, float] = field(default_factory=dict)  # metric → weight after renormalising (sum 1)
    missing: list[dict[str, str]] = field(default_factory=list)  # [{"name", "reason"}]
    pairs: list[dict] = field(default_factory=list)  # pairwise judgements, both orders, by output id
    winner: int | None = None
    tie: bool = False
    decided_by: str = ""
    error: str = ""
    categories: dict[int, str] = field(default_factory=dict)  # output → category, from a classification judge


def _shown(letters: dict[str, Candidate], order: Sequence[str]) -> list[Shown]:
    return [Shown(letter, letters[letter].prompt, letters[letter].text, letters[letter].reference) for letter in order]


async def judge_answers(
    *, client: JudgeClient, rubric: Rubric, mode: str, candidates: Sequence[Candidate], rng: random.Random
) -> Judgement:
    """Judge `candidates` (at least one) and name the winner, or a tie."""
    shuffled = list(candidates)
    rng.shuffle(shuffled)
    by_letter = {letter_for(index): candidate for index, candidate in enumerate(shuffled)}
    judgement = Judgement(letters={letter: c.output_id for letter, c in by_letter.items()})
    if len(candidates) == 1:
        judgement.winner, judgement.decided_by = candidates[0].output_id, ONLY_ANSWER
        return judgement
    if mode == JudgeMode.PAIRWISE:
        raw = await _pairwise(client, rubric, by_letter, rng, judgement)
    elif mode == JudgeMode.POINTWISE:
        raw = await _pointwise(client, rubric, by_letter, judgement)
    else:
        raw = await _relative(client, rubric, by_letter, rng, judgement)
    kept = [metric for metric in rubric.metrics if metric.name in raw]
    if not kept:
        judgement.error = nothing_judged(judgement.missing)
        return judgement
    _weigh(judgement, kept, raw)
    await _decide(client, rubric, by_letter, rng, judgement, mode)
    return judgement


async def _relative(client, rubric, by_letter, rng, judgement) -> dict[str, dict[int, MetricScore]]:
    letters = sorted(by_letter)
    asks = [
        Ask(
            kind="relative",
            subject=metric.name,
            orders=(tuple(rng.sample(letters, len(letters))), tuple(rng.sample(letters, len(letters)))),
            build=lambda order, metric=metric: relative_prompt(rubric, metric, _shown(by_letter, order)),
            read=lambda text, order: read_letter_scores(text, order, rubric),
        )
        for metric in rubric.metrics
    ]
    reads = await asyncio.gather(*(client.ask(ask) for ask in asks))
    raw: dict[str, dict[int, MetricScore]] = {}
    for metric, read in zip(rubric.metrics, reads, strict=True):
        if read.problems:
            judgement.missing.append({"name": metric.name, "reason": read.problem(next(iter(read.problems)))})
            continue
        raw[metric.name] = {
            by_letter[letter].output_id: _scored(rubric, scored) for letter, scored in read.values.items()
        }
    return raw


async def _pointwise(client, rubric, by_letter, judgement) -> dict[str, dict[int, MetricScore]]:
    letters = sorted(by_letter)
    asks = [
        Ask(
            kind="pointwise",
            subject=letter,
            orders=((letter,), (letter,)),
            build=lambda order: pointwise_prompt(rubric, _shown(by_letter, order)[0]),
            read=lambda text, order: read_metric_scores(text, rubric),
        )
        for letter in letters
    ]
    reads = dict(zip(letters, await asyncio.gather(*(client.ask(ask) for ask in asks)), strict=True))
    raw: dict[str, dict[int, MetricScore]] = {}
    for metric in rubric.metrics:
        failed = [letter for letter in letters if metric.name not in reads[letter].values]
        if failed:
            # A metric scored for some answers only would compare unlike with unlike: it is left out for all.
            reason = f"answer {failed[0]}: {reads[failed[0]].problem(metric.name)}"
            judgement.missing.append({"name": metric.name, "reason": reason})
            continue
        raw[metric.name] = {
            by_letter[letter].output_id: _scored(rubric, reads[letter].values[metric.name]) for letter in letters
        }
    return raw


def _scored(rubric: Rubric, scored: Scored) -> MetricScore:
    return MetricScore(raw=scored.raw, scaled=rubric.scaled(scored.raw), reason=scored.reason)


def _pair_ask(kind: str, first: str, second: str, build, read) -> tuple[Ask, Ask]:
    """The same question in both orders; a retry keeps its call's order, since the order is what is tested."""
    forward, backward = (first, second), (second, first)
    subject = f"{first}-{second}"
    return (
        Ask(kind=kind, subject=subject, orders=(forward, forward), build=build, read=read),
        Ask(kind=kind, subject=subject, orders=(backward, backward), build=build, read=read),
    )


async def _pairwise(client, rubric, by_letter, rng, judgement) -> dict[str, dict[int, MetricScore]]:
    letters = sorted(by_letter)
    pairs = [(a, b) if rng.random() < 0.5 else (b, a) for a, b in combinations(letters, 2)]
    asks = [
        ask
        for first, second in pairs
        for ask in _pair_ask(
            "pairwise",
            first,
            second,
            lambda order: pairwise_prompt(rubric, *_shown(by_letter, order)),
            lambda text, order: read_metric_winners(text, order, rubric),
        )
    ]
    reads = await asyncio.gather(*(client.ask(ask) for ask in asks))
    raw: dict[str, dict[int, MetricScore]] = {}
    for metric in rubric.metrics:
        outcomes, failure = [], ""
        for (first, second), forward, backward in zip(pairs, reads[0::2], reads[1::2], strict=True):
            record = _pair_record(by_letter, metric.name, first, second, forward, backward)
            judgement.pairs.append(record)
            if record["outcome"] is None and not failure:
                failed = forward if metric.name not in forward.values else backward
                failure = f"answers {first} and {second}: {failed.problem(metric.name)}"
            outcomes.append(record)
        if failure:
            judgement.missing.append({"name": metric.name, "reason": failure})
            continue
        raw[metric.name] = _pair_scores(by_letter, outcomes)
    return raw


def _pair_record(by_letter, metric: str, first: str, second: str, forward: Read, backward: Read) -> dict:
    """One pairwise judgement in both orders; a win counts only when both orders agree, otherwise a tie."""
    picks: list[Picked | None] = [forward.values.get(metric), backward.values.get(metric)]
    as_ids = [
        None if pick is None else TIE if pick.winner == TIE else by_letter[pick.winner].output_id for pick in picks
    ]
    outcome = None if None in as_ids else as_ids[0] if as_ids[0] == as_ids[1] else TIE
    return {
        "metric": metric,
        "first": by_letter[first].output_id,  # shown first in call 1, second in call 2
        "second": by_letter[second].output_id,
        "call_1": as_ids[0],
        "call_2": as_ids[1],
        "outcome": outcome,
        "reasons": [pick.reason if pick else "" for pick in picks],
    }


def _pair_scores(by_letter, records: list[dict]) -> dict[int, MetricScore]:
    ids = [candidate.output_id for candidate in by_letter.values()]
    won = dict.fromkeys(ids, 0)
    tied = dict.fromkeys(ids, 0)
    for record in records:
        if record["outcome"] == TIE:
            tied[record["first"]] += 1
            tied[record["second"]] += 1
        else:
            won[record["outcome"]] += 1
    others = len(ids) - 1
    return {
        output: MetricScore(
            raw=None,
            scaled=(won[output] + tied[output] / 2) / others,
            reason=f"won {won[output]}, tied {tied[output]}, lost {others - won[output] - tied[output]} of {others}",
        )
        for output in ids
    }


def _weigh(judgement: Judgement, kept: list[Metric], raw: dict[str, dict[int, MetricScore]]) -> None:
    """Weights shared out over the metrics that were judged (summing to 1) and each answer's weighted score."""
    judgement.weights = weights_over(kept)
    outputs = next(iter(raw.values())).keys()
    for output in outputs:
        judgement.scores[output] = {metric.name: raw[metric.name][output] for metric in kept}
        judgement.totals[output] = weighted_score(judgement.weights, judgement.scores[output])


async def _decide(client, rubric, by_letter, rng, judgement: Judgement, mode: str) -> None:
    """The best score wins unless others are within CLOSE_CALL of it: then every one of those contenders meets every
    other head to head (asked in both orders), and the one winning the most of those meetings wins."""
    ranked = sorted(judgement.totals, key=lambda output: -judgement.totals[output])
    top = ranked[0]
    contenders = [o for o in ranked if round(judgement.totals[top] - judgement.totals[o], 9) <= CLOSE_CALL]
    if len(contenders) == 1:
        judgement.winner, judgement.decided_by = top, SCORES
        return
    judgement.decided_by = HEAD_TO_HEAD
    pairs = list(combinations(contenders, 2))
    if mode == JudgeMode.PAIRWISE:
        # Every pair was already judged in both orders: each contenders' pair is decided by its weighted metrics.
        outcomes = {pair: _pairwise_outcome(judgement, *pair) for pair in pairs}
    else:
        outcomes = await _head_to_heads(client, rubric, by_letter, rng, judgement, pairs)
    if all(outcome is None for outcome in outcomes.values()):
        # No head-to-head could be read twice over: the scores, however close, are all there is.
        judgement.decided_by = SCORES
        best = [o for o in contenders if judgement.totals[o] == judgement.totals[top]]
        _settle(judgement, top if len(best) == 1 else None)
        return
    wins = dict.fromkeys(contenders, 0.0)
    for (a, b), outcome in outcomes.items():
        if outcome == TIE:
            wins[a] += 0.5
            wins[b] += 0.5
        elif outcome is not None:
            wins[outcome] += 1.0
    most = max(wins.values())
    leaders = [o for o in contenders if wins[o] == most]
    _settle(judgement, leaders[0] if len(leaders) == 1 else None)


def _pairwise_outcome(judgement: Judgement, a: int, b: int) -> int | str:
    share = sum(
        judgement.weights[record["metric"]]
        * (1.0 if record["outcome"] == a else 0.5 if record["outcome"] == TIE else 0.0)
        for record in judgement.pairs
        if {record["first"], record["second"]} == {a, b} and record["metric"] in judgement.weights
    )
    return a if share > 0.5 else b if share < 0.5 else TIE


async def _head_to_heads(client, rubric, by_letter, rng, judgement: Judgement, pairs) -> dict:
    """Each pair's head-to-head in both orders, all at once; a pair's outcome is None when it could not be read."""
    letter_of = {candidate.output_id: letter for letter, candidate in by_letter.items()}
    shown_first = [(a, b) if rng.random() < 0.5 else (b, a) for a, b in pairs]  # drawn up front, in pair order
    asks = [
        _pair_ask(
            "head_to_head",
            letter_of[first],
            letter_of[second],
            lambda order: head_to_head_prompt(rubric, *_shown(by_letter, order)),
            lambda text, order: Read(values={"overall": read_winner(text, order, lenient=rubric.lenient)}, problems={}),
        )
        for first, second in shown_first
    ]
    replies = await asyncio.gather(*(client.ask(ask) for pair in asks for ask in pair))
    outcomes = {}
    for index, (pair, (first, second)) in enumerate(zip(pairs, shown_first, strict=True)):
        forward, backward = replies[2 * index], replies[2 * index + 1]
        record = _pair_record(by_letter, "overall", letter_of[first], letter_of[second], forward, backward)
        judgement.pairs.append(record)
        outcomes[pair] = record["outcome"]
    return outcomes


def _settle(judgement: Judgement, winner: int | None) -> None:
    judgement.winner, judgement.tie = winner, winner is None
