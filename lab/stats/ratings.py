"""Bradley–Terry ratings from votes on the Elo-like 400-point scale (mean 1000), with bootstrap intervals and ranks.

Model: P(i beats j) = 1 / (1 + 10^((Rⱼ − Rᵢ) / 400)); a tie counts as half a win for each side. Ratings are the
exact maximum-likelihood fit (Newton's method to rounding, `fit_many`) whenever it exists: when every split of the
entities into two groups has each group scoring something against the other (the "scored against" graph is
strongly connected; Zermelo 1929, Ford 1957). When it does not (one vote gpt > claude; an 11–0 chain), no finite
rating fits the votes: the fit adds a tiny L2 penalty that keeps the ratings finite, and the entities outside the
largest strongly connected group are flagged `one_sided`: their ratings and intervals are set by that penalty, not
measured.

Everything here is a function of the set of votes, not of the order they are stored in: vote kinds and entities
are put in a canonical (sorted) order before the seeded bootstrap draws from them, and ranks come from a
deterministic test on the fitted ratings (`ranks_from_differences`), not from the resampled bounds.
"""

import math
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from itertools import combinations

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import connected_components
from scipy.special import expit, log_expit
from scipy.stats import binom, norm

from lab.stats.resampling import multinomial_draws
from lab.stats.sample_size import CONFIDENCE
from lab.stats.votes import RoundVote, VoteCounts

BASE_RATING = 1000.0
# Natural-log strengths to rating points: a 400-point gap means 10:1 odds.
POINTS_PER_UNIT = 400 / math.log(10)
# Weight of the L2 penalty on natural-log strengths, used only where no exact fit exists: about 0.1% of the
# information in a single match, so it keeps an unbeaten model finite.
DEFAULT_L2 = 1e-3
# Percentile intervals need a few hundred resamples to be stable at 2.5% / 97.5%; 200 keeps a 50-model leaderboard
# over 100,000 votes under a second. Raise `n_resamples` where time allows.
MIN_RESAMPLES = 200
DEFAULT_RESAMPLES = MIN_RESAMPLES


@dataclass(frozen=True, slots=True)
class Match:
    """One pairwise result: `a_score` is 1 when a won, 0 when b won, 0.5 for a tie (or an all-bad vote)."""

    a: str
    b: str
    a_score: float


@dataclass(frozen=True, slots=True)
class Rating:
    """A rated entity (model or prompt) with its bootstrap interval, rank and pairwise match counts.

    `one_sided`: the votes leave this entity's rating unbounded (see the module docstring), so the rating and its
    interval are set by the fitting penalty; `rank` is 1 + how many entities are rated clearly higher.
    `not_measured` says why the interval measures nothing (None when it does): one-sided votes, or resamples that
    all give the same rating (one tie, only ties): a zero-width interval from no spread is no evidence of
    precision. `bound_error`: how far another seed could move either bound, in points (see `bound_errors`).
    """

    key: str
    rating: float
    ci_low: float
    ci_high: float
    rank: int
    matches: int
    wins: int
    losses: int
    ties: int
    one_sided: bool = False
    not_measured: str | None = None
    bound_error: float = 0.0

    def as_shown(self) -> dict:
        """The fields as pages, the API and exports show them: the interval None when it measures nothing."""
        shown = asdict(self)
        if self.not_measured:
            shown["ci_low"] = shown["ci_high"] = None
        return shown


ONE_SIDED = "one-sided votes"
NO_SPREAD = "every resample of the votes gives the same rating"
# Resampled bounds closer than this (rating points) are one value: the fits agree to rounding, not to a measurement.
NO_SPREAD_WIDTH = 1e-6


def matches_from_vote(vote: RoundVote, key_of: Mapping[str, str] | None = None) -> list[Match]:
    """The pairwise matches one vote implies, between rated entities.

    `key_of` maps variant keys to what is rated (a model id, a prompt identity); pairs that map to the same entity
    say nothing about it and are skipped. Without `key_of` the variants themselves are rated.
    """
    return [Match(a, b, a_score) for a, b, a_score in _matches(_entities(vote.shown, key_of), _winner_at(vote))]


# What a vote's matches depend on: the entities shown, in order, and where the winner was (None for a tie or an
# all-bad vote).
def _entities(shown: tuple[str, ...], key_of: Mapping[str, str] | None) -> tuple[str, ...]:
    return shown if key_of is None else tuple([key_of[key] for key in shown])


def _winner_at(vote: RoundVote) -> int | None:
    return None if vote.winner is None else vote.shown.index(vote.winner)


def _matches(entities: tuple[str, ...], winner: int | None) -> list[tuple[str, str, float]]:
    """(a, b, a's score) for each pair of different entities the vote says something about: a tie or all-bad vote
    ties every pair, a winner beats each variant shown with it, and a pair that a third variant won says nothing."""
    matches = []
    for i, j in combinations(range(len(entities)), 2):
        if entities[i] == entities[j]:
            continue
        if winner is None:
            matches.append((entities[i], entities[j], 0.5))
        elif winner in (i, j):
            matches.append((entities[i], entities[j], float(winner == i)))
    return matches


def fit_bradley_terry(points: np.ndarray, *, l2: float = DEFAULT_L2, start: np.ndarray | None = None) -> np.ndarray:
    """Ratings (mean 1000) from a k×k matrix where points[i, j] is what i scored against j (wins + half the ties).

    With l2=0 this is the exact maximum-likelihood estimate, which exists when every split of the entities into two
    groups has each group scoring something against the other.
    """
    return fit_many(points[None], l2=np.array([l2], dtype=float), start=start)[0]


def fit_many(points: np.ndarray, *, l2: np.ndarray, start: np.ndarray | None = None) -> np.ndarray:
    """`fit_bradley_terry` on a stack of n points matrices (n×k×k) at once, with one penalty each (`l2`, n), from
    one start (natural-log strengths, k; zeros by default): ratings, n×k.

    The negative log-likelihood (plus the penalty, plus half the squared sum of the strengths, which pins their
    free offset without moving any difference) is convex and has k unknowns, so Newton's method converges in a few
    steps; a bootstrap's 200 fits are then a few batched k×k solves instead of 200 calls into scipy. A step is
    halved until it lowers the objective (Armijo's rule; the slack allows for rounding in a sum over a million
    votes). Each fit stops after a step that moved no strength by more than STEP_TOLERANCE, or when rounding
    leaves no step that lowers the objective: the fit is then at the maximum to rounding, closer than scipy's
    trust-exact `minimize` came with its gradient tolerance (7e-6 to 9e-6 points short at a million votes).
    """
    n, k = points.shape[:2]
    l2 = np.asarray(l2, dtype=float)
    strength = np.zeros((n, k)) if start is None else np.tile(np.asarray(start, dtype=float), (n, 1))
    value = _objective(points, l2, strength)
    active = np.arange(n)
    for _ in range(MAX_NEWTON_STEPS):
        gradient, hessian = _gradient_and_hessian(points[active], l2[active], strength[active])
        step = -np.linalg.solve(hessian, gradient[..., None])[..., 0]
        # A step this small is taken whole and is the fit's last: the objective could not tell it from none.
        last = np.abs(step).max(axis=1) <= STEP_TOLERANCE
        strength[active[last]] += step[last]
        active, gradient, step = active[~last], gradient[~last], step[~last]
        value[active], strength[active], stalled = _line_search(
            points[active], l2[active], strength[active], value[active], gradient, step
        )
        active = active[~stalled]
        if not len(active):
            break
    strength -= strength.mean(axis=1, keepdims=True)
    return BASE_RATING + POINTS_PER_UNIT * strength


# A fit stops after a Newton step that moved no strength by more than this (natural-log units, 4e-7 rating
# points): convergence is quadratic, so the next step would be of the order of its square, below rounding.
STEP_TOLERANCE = 1e-9
# Newton steps a fit may take, and halvings a step may take; a fit from zeros takes about 10 steps even where
# only the penalty keeps a rating finite, and one warm-started at a nearby fit 3–4.
MAX_NEWTON_STEPS = 100
MAX_HALVINGS = 60
ARMIJO = 1e-4
ROUNDING_SLACK = 1e-12


def _objective(points: np.ndarray, l2: np.ndarray, strength: np.ndarray) -> np.ndarray:
    gap = strength[:, :, None] - strength[:, None, :]
    total = strength.sum(axis=1)
    return -np.sum(points * log_expit(gap), axis=(1, 2)) + l2 / 2 * np.sum(strength**2, axis=1) + total**2 / 2


def _gradient_and_hessian(points: np.ndarray, l2: np.ndarray, strength: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    beats = expit(strength[:, :, None] - strength[:, None, :])  # beats[m, i, j] = P(i beats j) in fit m
    against = beats.transpose(0, 2, 1)
    total = strength.sum(axis=1, keepdims=True)
    gradient = (
        -(points * against).sum(axis=2) + (points.transpose(0, 2, 1) * beats).sum(axis=2) + l2[:, None] * strength
    ) + total
    information = (points + points.transpose(0, 2, 1)) * beats * against
    k = strength.shape[1]
    hessian = -information + 1.0
    diagonal = np.arange(k)
    hessian[:, diagonal, diagonal] += information.sum(axis=2) + l2[:, None]
    return gradient, hessian


def _line_search(
    points: np.ndarray,
    l2: np.ndarray,
    strength: np.ndarray,
    value: np.ndarray,
    gradient: np.ndarray,
    step: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The new values and strengths after each fit's step, halved until it lowers its objective enough, and which
    fits could not move (their step is below what rounding lets the objective see)."""
    slope = np.sum(gradient * step, axis=1)  # negative: the Hessian is positive definite
    length = np.ones(len(step))
    pending = np.arange(len(step))
    new_value, new_strength = value.copy(), strength.copy()
    for _ in range(MAX_HALVINGS):
        trial = strength[pending] + length[pending, None] * step[pending]
        trial_value = _objective(points[pending], l2[pending], trial)
        before = value[pending]
        limit = before + ARMIJO * length[pending] * slope[pending] + ROUNDING_SLACK * (1 + np.abs(before))
        accepted = trial_value <= limit
        new_value[pending[accepted]], new_strength[pending[accepted]] = trial_value[accepted], trial[accepted]
        pending = pending[~accepted]
        if not len(pending):
            break
        length[pending] /= 2
    stalled = np.zeros(len(step), dtype=bool)
    stalled[pending] = True
    return new_value, new_strength, stalled


def clearly_above(
    ratings: np.ndarray, difference_variance: np.ndarray, *, confidence: float = CONFIDENCE
) -> np.ndarray:
    """above[j, i] is True when entity j is rated clearly higher than i: the difference Rⱼ − Rᵢ exceeds z times
    its standard error (a two-sided z-test at 1 − confidence for that one pair, not adjusted for the others).

    `difference_variance[i, j]` is the variance of Rᵢ − Rⱼ in rating points²; it is computed, not resampled, so
    ranks built on it do not move with the bootstrap's seed.
    """
    gap = ratings[:, None] - ratings[None, :]
    return gap > norm.ppf(0.5 + confidence / 2) * np.sqrt(np.maximum(difference_variance, 0.0))


def ranks_from_differences(
    ratings: np.ndarray, difference_variance: np.ndarray, *, confidence: float = CONFIDENCE
) -> list[int]:
    """Rank = 1 + the number of entities rated clearly higher (see `clearly_above`). Rank 1 means no entity is
    clearly higher. Two entities may share a rank while a third is clearly above one of them only, so ranks need
    not be consecutive, and an overlap of bootstrap intervals is not what decides them."""
    above = clearly_above(ratings, difference_variance, confidence=confidence)
    return [1 + int(count) for count in above.sum(axis=0)]


@dataclass(frozen=True)
class MatchTable:
    """The votes reduced for fitting: one row per distinct set of matches a vote implies (votes of different kinds
    that imply the same matches between rated entities share a row), with how many votes imply it.

    Such votes are interchangeable in the fit and in every bootstrap resample (resampling votes and then merging
    them gives the same distribution as resampling the merged rows), so the work scales with the distinct sets of
    matches rather than the votes. `contributions` row t holds the points each ordered pair (i, j), flattened to
    i·k + j, scores in one vote of row t.
    """

    keys: list[str]
    contributions: csr_matrix
    counts: np.ndarray
    tallies: dict[str, dict[str, int]]

    def points(self, counts: np.ndarray | None = None) -> np.ndarray:
        """The k×k points matrix for `counts` votes of each row (the observed counts by default)."""
        k = len(self.keys)
        return ((self.counts if counts is None else counts) @ self.contributions).reshape(k, k)


# A vote's shape: the entities it showed, in the order shown, and where its winner was (None for a tie or an
# all-bad vote). A vote's matches depend on its shape alone.
VoteShape = tuple[tuple[str, ...], int | None]


def vote_shapes(votes: Sequence[RoundVote] | VoteCounts, key_of: Mapping[str, str] | None = None) -> Counter[VoteShape]:
    """How many votes (each vote, or how many votes of each kind) there are of each shape between the entities
    `key_of` rates (see `matches_from_vote`)."""
    counts = votes if isinstance(votes, Mapping) else Counter(votes)
    shapes: Counter[VoteShape] = Counter()
    entities_of: dict[tuple[str, ...], tuple[str, ...]] = {}  # a comparison's votes all show the same variants
    for vote, count in counts.items():
        if count > 0:
            if (entities := entities_of.get(vote.shown)) is None:
                entities = entities_of[vote.shown] = _entities(vote.shown, key_of)
            shapes[(entities, _winner_at(vote))] += count
    return shapes


def match_table(votes: Sequence[RoundVote] | VoteCounts, key_of: Mapping[str, str] | None = None) -> MatchTable:
    """Reduce votes (each vote, or how many votes of each kind) to the matches they imply between rated entities
    (see `matches_from_vote`)."""
    return shape_table(vote_shapes(votes, key_of))


# A match's score for its first entity, and as a digit (its place here, in the order of the scores).
SCORES = np.array([0.0, 0.5, 1.0])
SCORE_CODE = {score: code for code, score in enumerate(SCORES.tolist())}
# Where a pair of the entities a kind of vote showed is no match, in its row of match codes (sorts last).
NO_MATCH = np.iinfo(np.int64).max


def shape_table(shapes: Mapping[VoteShape, int]) -> MatchTable:
    """The match table of votes counted by shape (see `vote_shapes` and `coded_table`)."""
    names = sorted({name for (entities, _), count in shapes.items() if count > 0 for name in entities})
    place = {name: position for position, name in enumerate(names)}
    width = max((len(entities) for entities, _ in shapes), default=0)
    shown = np.full((len(shapes), width), -1, dtype=np.int64)
    for row, (entities, _) in enumerate(shapes):
        shown[row, : len(entities)] = [place.get(name, -1) for name in entities]
    winners = np.array([-1 if winner is None else winner for _, winner in shapes], dtype=np.int64)
    return coded_table(shown, winners, np.fromiter(shapes.values(), dtype=np.int64, count=len(shapes)), names)


def coded_table(shown: np.ndarray, winners: np.ndarray, counts: np.ndarray, names: Sequence[str]) -> MatchTable:
    """The match table of votes given as arrays, one entry per kind of vote: `shown[r]` the entities its votes
    showed, in the order shown, as places in `names` (sorted, distinct), padded on the right with −1; `winners[r]`
    the winner's column in `shown[r]`, or −1 for a tie or an all-bad vote; `counts[r]` how many votes it has.

    Rows and entities come in sorted order, whatever order the votes were given in, so a resample drawn with a
    given seed is the same for the same set of votes. The work is a few passes over the arrays per pair of columns,
    not a Python loop over the kinds (66,000 of them on the leaderboard benchmark).
    """
    codes, counts = _match_rows(shown, winners, counts, len(names))
    # One entry per match of each row: the row, both entities' columns and the first entity's score.
    rows, ends = np.nonzero(codes >= 0)
    pairs, score_codes = np.divmod(codes[rows, ends], len(SCORE_CODE))
    firsts, seconds = np.divmod(pairs, len(names))
    # The entities rated are those in some match; numbering them in name order keeps the rows' order.
    rated = np.zeros(len(names), dtype=bool)
    rated[firsts] = rated[seconds] = True
    keys = [name for name, kept in zip(names, rated, strict=True) if kept]
    number = np.cumsum(rated) - 1
    firsts, seconds = number[firsts], number[seconds]
    k = len(keys)
    scores = SCORES[score_codes]
    contributions = csr_matrix(
        (
            np.concatenate([scores, 1 - scores]),
            (np.tile(rows, 2), np.concatenate([firsts * k + seconds, seconds * k + firsts])),
        ),
        shape=(len(codes), k**2),
    )
    entity, score, count = (
        np.concatenate([firsts, seconds]),
        np.concatenate([scores, 1 - scores]),
        np.tile(counts[rows], 2),
    )

    def tally(picked: np.ndarray) -> np.ndarray:
        return np.bincount(entity[picked], weights=count[picked], minlength=k).astype(np.int64)

    everything = np.ones(len(entity), dtype=bool)
    columns = {"matches": tally(everything), "wins": tally(score == 1), "losses": tally(score == 0)}
    columns["ties"] = tally((score != 0) & (score != 1))
    tallies = {key: {name: int(column[i]) for name, column in columns.items()} for i, key in enumerate(keys)}
    return MatchTable(keys=keys, contributions=contributions, counts=counts, tallies=tallies)


def _match_rows(
    shown: np.ndarray, winners: np.ndarray, counts: np.ndarray, entities: int
) -> tuple[np.ndarray, np.ndarray]:
    """The distinct sets of matches the kinds of vote imply (see `_matches`), one row each in sorted order, with
    how many votes imply each; kinds that imply no match, and kinds counted zero times, are left out.

    A row holds its matches' codes in increasing order, padded on the right with −1. Each match is told from the
    side of its first entity in name order and coded as the number with digits (first, second, score) in bases
    (entities, entities, 3), so codes sort as matches do, entities compared by name, and rows sort as tuples of
    their codes would: a set of matches comes before the sets it is the start of.
    """
    columns = [np.full(len(shown), NO_MATCH, dtype=np.int64)]  # every row ends in no match: at least one column
    for i, j in combinations(range(shown.shape[1]), 2):
        first, second = shown[:, i], shown[:, j]
        tie = winners < 0
        says = (first >= 0) & (second >= 0) & (first != second) & (tie | (winners == i) | (winners == j))
        score = np.where(tie, SCORE_CODE[0.5], np.where(winners == i, SCORE_CODE[1.0], SCORE_CODE[0.0]))
        swap = first > second
        first, second = np.where(swap, second, first), np.where(swap, first, second)
        score = np.where(swap, SCORE_CODE[1.0] - score, score)
        columns.append(np.where(says, (first * entities + second) * len(SCORE_CODE) + score, NO_MATCH))
    codes = np.sort(np.stack(columns, axis=1), axis=1)
    kept = (codes[:, 0] != NO_MATCH) & (counts > 0)
    codes, counts = codes[kept], counts[kept]
    codes[codes == NO_MATCH] = -1
    order = np.lexsort(codes.T[::-1])
    codes, counts = codes[order], counts[order]
    starts = np.flatnonzero(np.concatenate([[True], (codes[1:] != codes[:-1]).any(axis=1)])) if len(codes) else order
    return codes[starts], np.add.reduceat(counts, starts) if len(starts) else counts[:0]


def strongly_connected(points: np.ndarray) -> np.ndarray:
    """Label per entity of its strongly connected group in the "scored something against" graph."""
    return connected_components(csr_matrix(points > 0), directed=True, connection="strong")[1]


def one_sided_entities(points: np.ndarray) -> np.ndarray:
    """True for entities whose rating the votes leave unbounded: those outside the largest strongly connected group
    (all of them when no group is largest). Empty of True exactly when the exact maximum-likelihood fit exists."""
    labels = strongly_connected(points)
    sizes = np.bincount(labels)
    if len(sizes) == 1:
        return np.zeros(len(points), dtype=bool)
    largest = np.flatnonzero(sizes == sizes.max())
    return np.ones(len(points), dtype=bool) if len(largest) > 1 else labels != largest[0]


def penalty_for(points: np.ndarray, l2: float | None) -> float:
    """The L2 weight to fit with: `l2` if given, else none where the exact fit exists and DEFAULT_L2 where not."""
    if l2 is not None:
        return l2
    return 0.0 if len(np.unique(strongly_connected(points))) == 1 else DEFAULT_L2


def resample_penalties(points: np.ndarray, every_points: np.ndarray, l2: float | None) -> np.ndarray:
    """`penalty_for` each resample (n×k×k). Which pairs scored something decides it, so a resample where the same
    pairs scored as in the votes (at a million votes, every one) gets the votes' penalty without a graph search."""
    alike = ((every_points > 0) == (points > 0)).all(axis=(1, 2))
    observed = penalty_for(points, l2)
    return np.array(
        [observed if same else penalty_for(drawn, l2) for drawn, same in zip(every_points, alike, strict=True)]
    )


def difference_variance(table: MatchTable, ratings: np.ndarray, l2: float) -> np.ndarray:
    """Variance of every difference Rᵢ − Rⱼ of the fitted ratings, in rating points²: per pair the larger of two
    estimates, the inverse observed information and the sandwich estimate that treats each vote as one unit (the
    matches one N-way vote implies are not independent, and ties scored as half a win make the fit a
    quasi-likelihood). Where a rating is unbounded its information is tiny and the inverse huge, so such ratings
    are never "clearly" apart from the rest, however far the penalty has pushed them.
    """
    k = len(table.keys)
    strength = (ratings - BASE_RATING) / POINTS_PER_UNIT
    beats = expit(strength[:, None] - strength[None, :])
    points = table.points()
    information = (points + points.T) * beats * beats.T
    # The all-ones term pins the free offset (as in the fit); it does not change any difference's variance.
    inverse = np.linalg.inv(np.diag(information.sum(axis=1)) - information + l2 * np.eye(k) + np.ones((k, k)))
    # Per kind of vote, the gradient of its negative log-likelihood: −Σⱼ Cₘⱼ P(j beats m) + Σᵢ Cᵢₘ P(m beats i).
    weighted = table.contributions.multiply(beats.T.reshape(1, -1)).tocsr()
    flat = np.arange(k * k)
    rows = csr_matrix((np.ones(k * k), (flat, flat // k)), shape=(k * k, k))
    columns = csr_matrix((np.ones(k * k), (flat, flat % k)), shape=(k * k, k))
    # Sparse: a vote's gradient is non-zero only for the entities it showed.
    gradients = (weighted @ (columns - rows)).tocsr()
    meat = (gradients.T @ gradients.multiply(table.counts[:, None]).tocsr()).toarray()
    sandwich = inverse @ meat @ inverse
    return POINTS_PER_UNIT**2 * np.maximum(_of_differences(sandwich), _of_differences(inverse))


def _of_differences(covariance: np.ndarray) -> np.ndarray:
    diagonal = np.diag(covariance)
    return diagonal[:, None] + diagonal[None, :] - 2 * covariance


def bound_errors(
    resampled: np.ndarray, quantile: float, bounds: np.ndarray, *, confidence: float = CONFIDENCE
) -> np.ndarray:
    """Per entity, how far the `quantile` bound of `resampled` (resamples × entities) could move with another seed:
    the largest distance from `bounds` to the ends of the distribution-free 95% range of that quantile, the
    order statistics j and k of the sorted resamples with j, k the binomial(n, quantile) 2.5% and 97.5% points
    (David & Nagaraja, Order Statistics, §7.1). At 200 resamples the 2.5% bound rests on about 5 of them, so this
    is often a sizeable share of the interval's width."""
    n = len(resampled)
    tail = (1 - confidence) / 2
    low, high = (int(np.clip(binom.ppf(q, n, quantile), 0, n - 1)) for q in (tail, 1 - tail))
    ordered = np.sort(resampled, axis=0)
    return np.maximum(np.abs(bounds - ordered[low]), np.abs(ordered[high] - bounds))


def bradley_terry(
    votes: Sequence[RoundVote] | VoteCounts,
    *,
    key_of: Mapping[str, str] | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    l2: float | None = None,
    confidence: float = CONFIDENCE,
) -> list[Rating]:
    """Ratings with percentile bootstrap intervals and ranks, highest rating first.

    votes: each vote, or how many votes of each kind there were (`VoteCounts`, as the leaderboard reads them).
    The fit is exact wherever the votes allow (l2=None; pass a number to force a penalty). The bootstrap
    resamples whole votes with replacement (a seeded numpy Generator over the canonical order of the match table's
    rows, so the same set of votes gives the same intervals), keeping the matches one N-way vote implies together; a
    resample without an exact fit is fitted with the penalty. Ranks do not use the resamples (see
    `ranks_from_differences`), so they do not move with the seed.
    """
    return table_ratings(match_table(votes, key_of), n_resamples=n_resamples, seed=seed, l2=l2, confidence=confidence)


def table_ratings(
    table: MatchTable,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    l2: float | None = None,
    confidence: float = CONFIDENCE,
) -> list[Rating]:
    """`bradley_terry` on votes already reduced to their match table (`match_table`, `shape_table`)."""
    if n_resamples < MIN_RESAMPLES:
        raise ValueError(f"use at least {MIN_RESAMPLES} bootstrap resamples")
    if not table.keys:
        return []
    points = table.points()
    penalty = penalty_for(points, l2)
    estimate = fit_bradley_terry(points, l2=penalty)
    start = (estimate - BASE_RATING) / POINTS_PER_UNIT
    rng = np.random.default_rng(seed)
    k = len(table.keys)
    # All resamples' points at once: the sparse (k² × rows) contributions times (rows × resamples) counts, each
    # resample's counts contiguous, as scipy's sparse product reads them fastest. The sums are of whole and half
    # points, exact in floating point in any order.
    draws = multinomial_draws(rng, table.counts, n_resamples)
    every_points = (table.contributions.T.tocsr() @ np.ascontiguousarray(draws.T, dtype=float)).T.reshape(
        n_resamples, k, k
    )
    resampled = fit_many(every_points, l2=resample_penalties(points, every_points, l2), start=start)
    tail = (1 - confidence) / 2
    lows, highs = np.quantile(resampled, [tail, 1 - tail], axis=0)
    errors = np.maximum(bound_errors(resampled, tail, lows), bound_errors(resampled, 1 - tail, highs))
    ranks = ranks_from_differences(estimate, difference_variance(table, estimate, penalty), confidence=confidence)
    one_sided = one_sided_entities(points)
    ratings = [
        Rating(
            key=key,
            rating=float(estimate[index]),
            ci_low=float(lows[index]),
            ci_high=float(highs[index]),
            rank=int(ranks[index]),
            one_sided=bool(one_sided[index]),
            not_measured=ONE_SIDED
            if one_sided[index]
            else NO_SPREAD
            if highs[index] - lows[index] < NO_SPREAD_WIDTH
            else None,
            bound_error=float(errors[index]),
            **table.tallies[key],
        )
        for index, key in enumerate(table.keys)
    ]
    return sorted(ratings, key=lambda rating: (-rating.rating, rating.key))
