"""Bradley–Terry ratings from votes on the Elo-like 400-point scale (mean 1000), with bootstrap intervals and ranks.

Model: P(i beats j) = 1 / (1 + 10^((Rⱼ − Rᵢ) / 400)); a tie counts as half a win for each side. Ratings are the
maximum-likelihood fit (scipy `minimize`) with a tiny L2 penalty so that a model that never lost still gets a
finite rating; the penalty is minimised at mean zero, which also pins the scale's otherwise free offset.
"""

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from scipy.optimize import minimize
from scipy.sparse import csr_matrix
from scipy.special import expit, log_expit

from voting.stats.sample_size import CONFIDENCE
from voting.stats.votes import RoundVote

BASE_RATING = 1000.0
# Natural-log strengths to rating points: a 400-point gap means 10:1 odds.
POINTS_PER_UNIT = 400 / math.log(10)
# Weight of the L2 penalty on natural-log strengths: about 0.1% of the information in a single match, so it moves
# well-measured ratings by a small fraction of a point but keeps an unbeaten model finite.
DEFAULT_L2 = 1e-3
# Percentile intervals need a few hundred resamples to be stable at 2.5% / 97.5%; 200 keeps a 50-model leaderboard
# over 100,000 votes under a second. Raise `n_resamples` where time allows.
MIN_RESAMPLES = 200
DEFAULT_RESAMPLES = MIN_RESAMPLES
GRADIENT_TOLERANCE = 1e-10


@dataclass(frozen=True, slots=True)
class Match:
    """One pairwise result: `a_score` is 1 when a won, 0 when b won, 0.5 for a tie (or an all-bad vote)."""

    a: str
    b: str
    a_score: float


@dataclass(frozen=True, slots=True)
class Rating:
    """A rated entity (model or prompt) with its bootstrap interval, shared rank and pairwise match counts."""

    key: str
    rating: float
    ci_low: float
    ci_high: float
    rank: int
    matches: int
    wins: int
    losses: int
    ties: int


def matches_from_vote(vote: RoundVote, key_of: Mapping[str, str] | None = None) -> list[Match]:
    """The pairwise matches one vote implies, between rated entities.

    `key_of` maps variant keys to what is rated (a model id, a prompt identity); pairs that map to the same entity
    say nothing about it and are skipped. Without `key_of` the variants themselves are rated.
    """
    entity = (lambda key: key_of[key]) if key_of is not None else (lambda key: key)
    winner = vote.winner
    matches = []
    for index, first in enumerate(vote.shown):
        for second in vote.shown[index + 1 :]:
            a, b = entity(first), entity(second)
            if a == b:
                continue
            if winner is None:
                matches.append(Match(a=a, b=b, a_score=0.5))
            elif winner in (first, second):
                matches.append(Match(a=a, b=b, a_score=float(winner == first)))
            # Otherwise a third variant won: the vote says nothing about this pair.
    return matches


def fit_bradley_terry(points: np.ndarray, *, l2: float = DEFAULT_L2, start: np.ndarray | None = None) -> np.ndarray:
    """Ratings (mean 1000) from a k×k matrix where points[i, j] is what i scored against j (wins + half the ties).

    With l2=0 this is the exact maximum-likelihood estimate, which exists when every split of the entities into two
    groups has each group scoring something against the other.
    """
    games = points + points.T
    k = len(points)

    def objective(strength: np.ndarray) -> tuple[float, np.ndarray]:
        gap = strength[:, None] - strength[None, :]
        beats = expit(gap)  # beats[i, j] = P(i beats j)
        total = strength.sum()
        value = -np.sum(points * log_expit(gap)) + l2 / 2 * strength @ strength + total**2 / 2
        gradient = -(points * beats.T).sum(axis=1) + (points.T * beats).sum(axis=1) + l2 * strength + total
        return value, gradient

    def hessian(strength: np.ndarray) -> np.ndarray:
        beats = expit(strength[:, None] - strength[None, :])
        information = games * beats * beats.T
        return np.diag(information.sum(axis=1)) - information + l2 * np.eye(k) + np.ones((k, k))

    # trust-exact: the problem is convex and small (one row per model), so Newton steps converge in a few iterations.
    # Its default stopping rule (gradient below 1e-4) can leave ratings several points short when a model is
    # unbeaten; this one scales with the number of games, since the gradient is a sum over them. When it is finer
    # than floating point allows, scipy stops at that floor and reports a "bad approximation": the fit is done.
    result = minimize(
        objective,
        np.zeros(k) if start is None else start,
        jac=True,
        hess=hessian,
        method="trust-exact",
        options={"gtol": GRADIENT_TOLERANCE * max(1.0, games.sum())},
    )
    strength = result.x - result.x.mean()
    return BASE_RATING + POINTS_PER_UNIT * strength


def shared_ranks(lows: Sequence[float], highs: Sequence[float]) -> list[int]:
    """Rank = 1 + the number of entities whose interval lies entirely above this one's (their low > this high).

    So an entity shares a rank with every entity whose interval overlaps its own, and rank 1 means nothing is
    clearly better. Ranks need not be consecutive.
    """
    return [1 + sum(low > high for low in lows) for high in highs]


@dataclass(frozen=True)
class MatchTable:
    """The votes reduced for fitting: one row per distinct kind of vote, with how many votes were of that kind.

    Identical votes imply identical matches, so the work (and every bootstrap resample) scales with the kinds of
    votes rather than their number. `contributions` row t holds the points each ordered pair (i, j), flattened to
    i·k + j, scores in one vote of kind t.
    """

    keys: list[str]
    contributions: csr_matrix
    counts: np.ndarray
    tallies: dict[str, dict[str, int]]

    def points(self, counts: np.ndarray | None = None) -> np.ndarray:
        """The k×k points matrix for `counts` votes of each kind (the observed counts by default)."""
        k = len(self.keys)
        return ((self.counts if counts is None else counts) @ self.contributions).reshape(k, k)


def match_table(votes: Sequence[RoundVote], key_of: Mapping[str, str] | None = None) -> MatchTable:
    """Reduce votes to the matches they imply between rated entities (see `matches_from_vote`)."""
    kind_matches, kind_counts = [], []
    for (shown, outcome), count in Counter((vote.shown, vote.outcome) for vote in votes).items():
        if matches := matches_from_vote(RoundVote(shown, outcome), key_of):
            kind_matches.append(matches)
            kind_counts.append(count)
    keys = list(dict.fromkeys(key for matches in kind_matches for match in matches for key in (match.a, match.b)))
    index = {key: position for position, key in enumerate(keys)}
    rows, columns, values = [], [], []
    tallies = {key: {"matches": 0, "wins": 0, "losses": 0, "ties": 0} for key in keys}
    for row, (matches, count) in enumerate(zip(kind_matches, kind_counts, strict=True)):
        for match in matches:
            a, b = index[match.a], index[match.b]
            rows += [row, row]
            columns += [a * len(keys) + b, b * len(keys) + a]
            values += [match.a_score, 1 - match.a_score]
            for key, score in ((match.a, match.a_score), (match.b, 1 - match.a_score)):
                tallies[key]["matches"] += count
                tallies[key]["wins" if score == 1 else "losses" if score == 0 else "ties"] += count
    contributions = csr_matrix((values, (rows, columns)), shape=(len(kind_matches), len(keys) ** 2))
    return MatchTable(keys=keys, contributions=contributions, counts=np.array(kind_counts), tallies=tallies)


def bradley_terry(
    votes: Sequence[RoundVote],
    *,
    key_of: Mapping[str, str] | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    l2: float = DEFAULT_L2,
    confidence: float = CONFIDENCE,
) -> list[Rating]:
    """Ratings with percentile bootstrap intervals and shared ranks, highest rating first.

    The bootstrap resamples whole votes with replacement (a seeded numpy Generator, so reruns agree), keeping the
    matches one N-way vote implies together; for two-way votes this is resampling matches.
    """
    if n_resamples < MIN_RESAMPLES:
        raise ValueError(f"use at least {MIN_RESAMPLES} bootstrap resamples")
    table = match_table(votes, key_of)
    if not table.keys:
        return []
    estimate = fit_bradley_terry(table.points(), l2=l2)
    start = (estimate - BASE_RATING) / POINTS_PER_UNIT
    rng = np.random.default_rng(seed)
    total = table.counts.sum()
    resampled = [
        fit_bradley_terry(table.points(counts), l2=l2, start=start)
        for counts in rng.multinomial(total, table.counts / total, size=n_resamples)
    ]
    tail = (1 - confidence) / 2
    lows, highs = np.quantile(resampled, [tail, 1 - tail], axis=0)
    ranks = shared_ranks(lows, highs)
    ratings = [
        Rating(
            key=key,
            rating=float(estimate[index]),
            ci_low=float(lows[index]),
            ci_high=float(highs[index]),
            rank=int(ranks[index]),
            **table.tallies[key],
        )
        for index, key in enumerate(table.keys)
    ]
    return sorted(ratings, key=lambda rating: -rating.rating)
