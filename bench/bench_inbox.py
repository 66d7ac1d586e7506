"""Benchmark: votes needed to reach a significant verdict on every comparison of a workspace when the inbox's rule
assigns rounds, against round-robin and random assignment. Target: the inbox needs at most 0.7 × round-robin's
votes, at an equal error rate.

Simulated workspaces: each has comparisons of 2 or 3 variants with known Bradley–Terry strengths (P(i beats j) =
s_i / (s_i + s_j)), rounds to vote on, and voters who take turns asking for their next round. A vote is a tie or
"all bad" with fixed probabilities, else the BT winner, except that each voter answers at random some share of the
time (careless voters exist). A person's vote on a round is drawn from a seed of (workspace, comparison, round,
voter), so every strategy sees the same vote whenever it asks the same person about the same round.

A comparison reaches its verdict the first time its report (lab.stats.report.build_report, the sign tests with
Holm's adjustment and the 10-decisive-vote minimum) calls every pair significant; that verdict is wrong when any
pair's leader is the weaker variant. All three strategies stop at the same moment: once every comparison has a
verdict. The inbox's rule is voting.inbox.rule itself: the same code the inbox serves with.

    python bench/bench_inbox.py [--workspaces 20] [--comparisons 6] [--rounds 40] [--voters 6] [--seed 1]
"""

from __future__ import annotations

import argparse
import math
import os
import random
import statistics
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "promptlab.settings")

import django  # noqa: E402

django.setup()

from lab.stats.report import build_report  # noqa: E402
from lab.stats.votes import ALL_BAD, TIE, RoundVote  # noqa: E402
from voting.inbox.rule import Candidate, choose, comparison_need  # noqa: E402

TARGET_RATIO = 0.7
TIE_P, ALL_BAD_P = 0.12, 0.04


@dataclass
class Comparison:
    strengths: dict[str, float]
    votes: list[RoundVote] = field(default_factory=list)
    round_votes: list[int] = field(default_factory=list)
    decided_at: int | None = None  # votes cast in the workspace when its verdict came
    wrong: bool = False

    @property
    def keys(self) -> list[str]:
        return list(self.strengths)


def make_workspace(rng: random.Random, comparisons: int, rounds: int) -> list[Comparison]:
    """Comparisons whose closest pair has a win probability between 0.64 and 0.85: all reachable, some slowly."""
    made = []
    for index in range(comparisons):
        p = rng.uniform(0.64, 0.85)
        step = math.log(p / (1 - p))  # BT log-strength gap that gives P(better wins) = p
        size = 3 if index % 3 == 2 else 2
        names = [f"c{index}v{position}" for position in range(size)]
        order = rng.sample(range(size), size)  # which variant is strongest is random
        made.append(Comparison({name: math.exp(step * rank) for name, rank in zip(names, order, strict=True)}))
        made[-1].round_votes = [0] * rounds
    return made


_needs: dict[tuple, object] = {}


def need_of(comparison: Comparison):
    """comparison_need, remembered by the comparison's vote counts: the report's significance and its "more votes"
    depend on how many votes went each way, not on their order (only the peek-safe p-value does, which the rule
    does not read), so equal counts give the same need. Saves recomputing the report's power analysis."""
    key = (tuple(comparison.keys), tuple(sorted(Counter(vote.outcome for vote in comparison.votes).items())))
    if key not in _needs:
        _needs[key] = comparison_need(comparison.keys, comparison.votes)
    return _needs[key]


def vote_of(comparison: Comparison, seed: tuple, care: float) -> RoundVote:
    rng = random.Random(hash(seed))
    keys = comparison.keys
    draw = rng.random()
    if draw < TIE_P:
        return RoundVote(tuple(keys), TIE)
    if draw < TIE_P + ALL_BAD_P:
        return RoundVote(tuple(keys), ALL_BAD)
    if rng.random() > care:
        return RoundVote(tuple(keys), rng.choice(keys))
    weights = [comparison.strengths[key] for key in keys]
    return RoundVote(tuple(keys), rng.choices(keys, weights=weights)[0])


def verdict_wrong(comparison: Comparison) -> bool:
    for pair in build_report(variants=comparison.keys, votes=comparison.votes, score_resamples=0)["pairs"]:
        a_leads = pair["a_wins"] > pair["b_wins"]
        if a_leads != (comparison.strengths[pair["a"]] > comparison.strengths[pair["b"]]):
            return True
    return False


def fewest_votes(comparison: Comparison, open_rounds: set[int]) -> int:
    """Of the rounds still open to a voter, the one with the fewest votes (the earliest when level)."""
    return min(open_rounds, key=lambda number: (comparison.round_votes[number], number))


def simulate(strategy: str, workspace_seed: int, args) -> tuple[int, list[Comparison]]:
    """Votes cast until every comparison has a verdict (or no vote is left that could bring the missing ones), and
    the comparisons."""
    rng = random.Random(workspace_seed)
    comparisons = make_workspace(rng, args.comparisons, args.rounds)
    care = [rng.uniform(0.7, 0.95) for _ in range(args.voters)]
    # remaining[voter][comparison]: the rounds of that comparison the voter has not voted on yet.
    remaining = [[set(range(args.rounds)) for _ in comparisons] for _ in range(args.voters)]
    needs = {index: need_of(c) for index, c in enumerate(comparisons)}
    pick_rng = random.Random(workspace_seed * 7 + 1)
    cast, step = 0, 0
    while True:
        undecided = [index for index, c in enumerate(comparisons) if c.decided_at is None]
        if not any(remaining[voter][index] for voter in range(args.voters) for index in undecided):
            break  # every verdict reached, or no vote left that could bring the missing ones
        voter = step % args.voters
        step += 1
        open_comparisons = [index for index in range(len(comparisons)) if remaining[voter][index]]
        if not open_comparisons:
            continue

        if strategy == "inbox":
            # One candidate per comparison, its round with the fewest votes: within a comparison the rule's order is
            # (votes, round id), so the best of each is all it can pick from.
            candidates = []
            for index in open_comparisons:
                number = fewest_votes(comparisons[index], remaining[voter][index])
                votes = comparisons[index].round_votes[number]
                candidates.append(Candidate(index * args.rounds + number, index, needs[index], votes, False))
            index, number = divmod(choose(candidates).round_id, args.rounds)
        elif strategy == "round-robin":
            # The comparisons in turn (one vote each, then the next), each on its round with the fewest votes.
            turn = cast % len(comparisons)
            index = min(open_comparisons, key=lambda i: (i - turn) % len(comparisons))
            number = fewest_votes(comparisons[index], remaining[voter][index])
        else:
            index, number = pick_rng.choice([(i, n) for i in open_comparisons for n in sorted(remaining[voter][i])])
        comparison = comparisons[index]
        remaining[voter][index].discard(number)
        comparison.votes.append(vote_of(comparison, (workspace_seed, index, number, voter), care[voter]))
        comparison.round_votes[number] += 1
        cast += 1
        needs[index] = need_of(comparison)
        if comparison.decided_at is None and needs[index].decided:
            comparison.decided_at = cast
            comparison.wrong = verdict_wrong(comparison)
    return cast, comparisons


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workspaces", type=int, default=20)
    parser.add_argument("--comparisons", type=int, default=6)
    parser.add_argument("--rounds", type=int, default=60)
    parser.add_argument("--voters", type=int, default=6)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    print(
        f"{args.workspaces} simulated workspaces × {args.comparisons} comparisons (2 or 3 variants), {args.rounds} "
        f"rounds each, {args.voters} voters; verdict = every pair significant by the report's sign test (Holm)"
    )
    results = {}
    started = time.perf_counter()
    for strategy in ("inbox", "round-robin", "random"):
        results[strategy] = [simulate(strategy, args.seed * 1000 + offset, args) for offset in range(args.workspaces)]
    # Votes are compared on the workspaces where every strategy reached every verdict (paired, same comparisons
    # and voters); the others are counted apart.
    complete = [
        offset
        for offset in range(args.workspaces)
        if all(c.decided_at is not None for runs in results.values() for c in runs[offset][1])
    ]
    base = [results["round-robin"][offset][0] for offset in complete]
    print(
        f"{'assignment':<12} {'votes (mean)':>12} {'median':>7} {'× round-robin':>14} {'median ratio':>13} "
        f"{'wrong verdicts':>18} {'workspaces short of a verdict':>30}"
    )
    ratios = {}
    for strategy, runs in results.items():
        votes = [runs[offset][0] for offset in complete]
        verdicts = sum(c.decided_at is not None for _, comparisons in runs for c in comparisons)
        wrong = sum(c.wrong for _, comparisons in runs for c in comparisons)
        short = sum(any(c.decided_at is None for c in comparisons) for _, comparisons in runs)
        ratios[strategy] = sum(votes) / sum(base)
        median_ratio = statistics.median(v / b for v, b in zip(votes, base, strict=True))
        error = f"{wrong}/{verdicts} = {wrong / verdicts:.1%}"
        print(
            f"{strategy:<12} {statistics.mean(votes):>12.1f} {statistics.median(votes):>7.0f} "
            f"{ratios[strategy]:>14.2f} {median_ratio:>13.2f} {error:>18} {short:>30}"
        )
    verdict = "meets" if ratios["inbox"] <= TARGET_RATIO else "misses"
    print(
        f"inbox / round-robin = {ratios['inbox']:.2f} of the votes over {len(complete)} of {args.workspaces} "
        f"workspaces where all three reached every verdict (target ≤ {TARGET_RATIO}): {verdict} the target"
    )
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
