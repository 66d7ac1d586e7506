"""Ratings across a workspace: Bradley–Terry on every vote of its comparisons, by model or by prompt version.

By model, each variant stands for its model id; by prompt, for its prompt version (the normalised system prompt
and prompt text, `prompt_identity`), shown with the labels its variants had. A vote says nothing about two
variants that stand for the same thing (one model, two prompts, on the model board), so such pairs are skipped.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from datetime import date

from django.db.models import QuerySet, TextChoices

from compare.models import Variant
from lab.models import Workspace
from lab.stats.ratings import DEFAULT_RESAMPLES, Rating, table_ratings
from lab.stats.sample_size import CONFIDENCE, MIN_DECISIVE_PER_PAIR
from lab.stats.wording import and_list, count_of, rating_text
from voting.prompt_identity import prompt_identity

from ..models import Vote, VoteCount
from ..voters.exclusions import left_out
from .comparison import RatedVariants, kinds_table
from .vote_counts import counted_kinds

PROMPT_EXCERPT_CHARS = 160


class By(TextChoices):
    MODEL = "model", "Model"
    PROMPT = "prompt", "Prompt version"


@dataclass(frozen=True)
class LeaderboardFilters:
    """Which votes count: cast on or after `since` and on or before `until` (dates, UTC), in comparisons created
    by the user named `author`, or in one comparison (`group`)."""

    since: date | None = None
    until: date | None = None
    author: str | None = None
    group: int | None = None

    def as_dict(self) -> dict:
        return {name: value.isoformat() if isinstance(value, date) else value for name, value in asdict(self).items()}


@dataclass
class Entity:
    """What one rating stands for, as people recognise it."""

    label: str
    labels: list[str] = field(default_factory=list)
    models: list[str] = field(default_factory=list)
    groups: set[int] = field(default_factory=set)
    prompt: str | None = None

    def add(self, label: str, model: str, group_id: int) -> None:
        if label not in self.labels:
            self.labels.append(label)
        if model not in self.models:
            self.models.append(model)
        self.groups.add(group_id)


def _comparisons(filters: LeaderboardFilters, path: str) -> dict:
    """The author and comparison filters, as lookups from a model that reaches CompareGroup through `path`."""
    lookups = {}
    if filters.author:
        lookups[f"{path}created_by__username"] = filters.author
    if filters.group:
        lookups[f"{path}id"] = filters.group
    return lookups


def _cast_between(filters: LeaderboardFilters, field: str) -> dict:
    """The since and until filters, as lookups on a date field (`field`) holding the day a vote was cast (UTC)."""
    lookups = {}
    if filters.since:
        lookups[f"{field}__gte"] = filters.since
    if filters.until:
        lookups[f"{field}__lte"] = filters.until
    return lookups


def workspace_votes(workspace: Workspace, filters: LeaderboardFilters) -> QuerySet[Vote]:
    return Vote.objects.filter(
        group__workspace=workspace, **_comparisons(filters, "group__"), **_cast_between(filters, "created_at__date")
    )


def workspace_vote_counts(workspace: Workspace, filters: LeaderboardFilters) -> QuerySet[VoteCount]:
    """The kept counts of the votes workspace_votes selects (a count's day is its votes' created_at date, UTC)."""
    return VoteCount.objects.filter(
        group__workspace=workspace, **_comparisons(filters, "group__"), **_cast_between(filters, "day")
    )


def workspace_variants(workspace: Workspace, filters: LeaderboardFilters) -> QuerySet[Variant]:
    """The variants of every comparison the votes may be on."""
    return Variant.objects.filter(group__workspace=workspace, **_comparisons(filters, "group__"))


def entities(workspace: Workspace, filters: LeaderboardFilters, by: str) -> tuple[dict[str, str], dict[str, Entity]]:
    """variant key → the rated key (model id or prompt identity), and each rated key's description."""
    described, variants = entities_and_variants(workspace, filters, by)
    return variants.key_of(), described


def entities_and_variants(
    workspace: Workspace, filters: LeaderboardFilters, by: str
) -> tuple[dict[str, Entity], RatedVariants]:
    """Each rated key's description, and the variants with the key each is rated under, from one read of the
    variants (their prompts only when rating prompt versions)."""
    texts = ("prompt", "group__system_prompt") if by == By.PROMPT else ()
    rows = (
        workspace_variants(workspace, filters)
        .order_by("group_id", "position")
        .values_list("id", "group_id", "label", "model", *texts)
    )
    described: dict[str, Entity] = {}
    ids, groups, keys = [], [], []
    for pk, group_id, label, model, *prompts in rows:
        if by == By.MODEL:
            key = model
            if (entity := described.get(key)) is None:
                entity = described[key] = Entity(label=model)
        else:
            prompt, system_prompt = prompts
            key = prompt_identity(system_prompt, prompt)
            if (entity := described.get(key)) is None:
                entity = described[key] = Entity(label=label, prompt=_excerpt(system_prompt, prompt))
        entity.add(label, model, group_id)
        ids.append(pk)
        groups.append(group_id)
        keys.append(key)
    for entity in described.values():
        if by == By.PROMPT:
            entity.label = " / ".join(entity.labels)
    return described, RatedVariants.of(groups, ids, keys)


def leaderboard(
    workspace: Workspace,
    *,
    by: str = By.MODEL,
    filters: LeaderboardFilters | None = None,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
) -> dict:
    """Ratings with bootstrap intervals and ranks, highest first, with a plain-words summary. Every figure is a
    function of the set of votes the filters select (not their storage order); the ranks do not depend on `seed`."""
    filters = filters or LeaderboardFilters()
    every_vote = workspace_votes(workspace, filters)
    described, variants = entities_and_variants(workspace, filters, by)
    counts = workspace_vote_counts(workspace, filters)
    kinds = counted_kinds(counts, every_vote, workspace.pk, ("group_id", "variant_id"))
    table, total = kinds_table(kinds, variants)
    ratings = table_ratings(table, n_resamples=n_resamples, seed=seed)
    return {
        "by": by,
        "workspace": workspace.pk,
        "filters": filters.as_dict(),
        "votes": total,
        "resamples": n_resamples,
        "seed": seed,
        "confidence": CONFIDENCE,
        "minimum_matches": MIN_DECISIVE_PER_PAIR,
        **board_figures(ratings, described, by=by, votes=total),
        "left_out": left_out(every_vote, workspace.pk),
    }


def board_figures(ratings: list[Rating], described: dict[str, Entity], *, by: str, votes: int) -> dict:
    """The leaderboard's figures from its ratings alone: {"ratings", "summary", "one_sided", "fit"}."""
    return {
        "ratings": [_rating_entry(rating, described[rating.key]) for rating in ratings],
        "summary": summary(ratings, described, by=by, votes=votes),
        # The most another seed could move a measured bound on this board (see ratings.bound_errors).
        "bound_error": max((rating.bound_error for rating in ratings if not rating.not_measured), default=None),
        "one_sided": any(rating.one_sided for rating in ratings),
        "fit": FIT_PENALISED if any(rating.one_sided for rating in ratings) else FIT_EXACT,
    }


FIT_EXACT = "exact maximum likelihood"
FIT_PENALISED = "maximum likelihood with a small L2 penalty (the votes admit no exact fit)"


def _rating_entry(rating: Rating, entity: Entity) -> dict:
    return {
        **rating.as_shown(),
        "label": entity.label,
        "labels": entity.labels,
        "models": entity.models,
        "groups": len(entity.groups),
        "prompt": entity.prompt,
        "few_matches": rating.matches < MIN_DECISIVE_PER_PAIR,
    }


def summary(ratings: list[Rating], described: dict[str, Entity], *, by: str, votes: int) -> str:
    """One paragraph: who leads, whether the lead is clear, and where the data is still thin or one-sided."""
    noun = "model" if by == By.MODEL else "prompt version"
    if not ratings:
        return (
            f"No ratings yet: {count_of(votes, 'vote')} so far, and ratings need votes on comparisons that show at "
            f"least two different {noun}s."
        )
    leader, others = ratings[0], ratings[1:]
    if leader.one_sided:
        interval = "its interval is not a measurement, see below"
    elif leader.not_measured:
        interval = f"no interval: {leader.not_measured}, so the votes do not show how precise it is"
    else:
        interval = f"95% bootstrap interval {rating_text(leader.ci_low)}–{rating_text(leader.ci_high)}"
    parts = [
        f"{described[leader.key].label} has the highest rating, {rating_text(leader.rating)} ({interval}), from "
        f"{leader.matches:,} match{'' if leader.matches == 1 else 'es'}."
    ]
    level = [described[rating.key].label for rating in others if rating.rank == 1]
    if level:
        parts.append(
            f"{and_list(level)} also {'ranks' if len(level) == 1 else 'rank'} first: no {noun} is rated clearly "
            f"higher than {'it' if len(level) == 1 else 'them'}, so more votes are needed to separate the top."
        )
    elif others:
        parts.append(
            f"It is the only {noun} ranked first: every other {noun} has at least one rated clearly higher "
            "(a z-test on the difference at 5% for each pair)."
        )
    one_sided = [described[rating.key].label for rating in ratings if rating.one_sided]
    if len(one_sided) == len(ratings):
        parts.append(
            f"The votes are one-sided: no chain of wins (a tie counts both ways) leads from every {noun} to every "
            "other and back, so no finite rating fits them. The ratings are set by the fitting penalty and the "
            "intervals do not measure anything; more varied votes are needed."
        )
    elif one_sided:
        one = len(one_sided) == 1
        parts.append(
            f"The votes are one-sided for {and_list(one_sided)}: no chain of wins (a tie counts both ways) leads "
            f"from the rest of the board to {'it' if one else 'them'} and back, so no finite rating fits the votes. "
            f"{'Its rating is' if one else 'Their ratings are'} set by the fitting penalty and "
            f"{'its interval does' if one else 'their intervals do'} not measure anything; more varied votes are "
            "needed."
        )
    thin = sum(rating.matches < MIN_DECISIVE_PER_PAIR for rating in ratings)
    if thin:
        parts.append(
            f"{count_of(thin, noun)} {'has' if thin == 1 else 'have'} fewer than {MIN_DECISIVE_PER_PAIR} matches, "
            f"so {'its rank is' if thin == 1 else 'their ranks are'} provisional."
        )
    return " ".join(parts)


def _excerpt(system_prompt: str, prompt: str) -> str:
    text = " ".join(prompt.split())
    if system_prompt.strip():
        text = f"[system] {' '.join(system_prompt.split())} · {text}"
    return text if len(text) <= PROMPT_EXCERPT_CHARS else text[: PROMPT_EXCERPT_CHARS - 1] + "…"
