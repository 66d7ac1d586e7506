"""How each version of a library prompt has fared: its win rate and rating accumulated over every vote of every
comparison it ran in, its judge scores, and the experiments it ran in.

A variant stands for a version when it ran it unchanged (compare.prompts.selectors.version_variants). Votes are
read as on the leaderboard (cast order, failed answers shown), and each variant is mapped to what it stands for:
its version, or else its own prompt identity, so a vote between two variants running the same version says
nothing about it and is skipped, as the leaderboard skips pairs that stand for the same thing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from statistics import mean

from compare.experiments.models import Experiment
from compare.models import CompareGroup, Output, Variant
from compare.prompts.models import Prompt, PromptVersion
from compare.prompts.selectors import prompt_versions, version_variants
from lab.stats.ratings import DEFAULT_RESAMPLES, Rating, bradley_terry
from lab.stats.votes import RoundVote, encode_votes
from lab.stats.winrate import WinRate, win_rates
from voting.prompt_identity import prompt_identity

from .reports.comparison import shown_by_group, variant_key, vote_records
from .reports.judge_scores import group_judge_scores
from .reports.leaderboard import LeaderboardFilters, workspace_variants, workspace_votes


def version_key(version_id: int) -> str:
    return f"version:{version_id}"


@dataclass
class JudgeMean:
    judge: str
    scores: int
    mean: float  # weighted judge score, 0–1


@dataclass
class ExperimentRun:
    group: int
    title: str
    answers: int
    mean_score: float | None


@dataclass
class VersionStanding:
    version: PromptVersion
    comparisons: int
    win_rate: WinRate | None
    rating: Rating | None
    judge_scores: list[JudgeMean] = field(default_factory=list)
    experiments: list[ExperimentRun] = field(default_factory=list)


def version_votes(workspace, key_of: dict[str, str]) -> list[RoundVote]:
    """Every vote of the workspace with its variants replaced by what they stand for (duplicates merged); votes
    left with fewer than two distinct things shown say nothing and are dropped."""
    filters = LeaderboardFilters()
    votes = vote_records(workspace_votes(workspace, filters), shown_by_group(workspace_variants(workspace, filters)))
    mapped: list[RoundVote] = []
    for vote in votes:
        shown = tuple(dict.fromkeys(key_of[key] for key in vote.shown))
        if len(shown) < 2:
            continue
        mapped.append(RoundVote(shown, key_of[vote.winner] if vote.winner else vote.outcome))
    return mapped


def _key_of(workspace) -> dict[str, str]:
    running = dict(
        version_variants(PromptVersion.objects.filter(prompt__workspace=workspace)).values_list("id", "prompt_version")
    )
    rows = Variant.objects.filter(group__workspace=workspace).values_list("id", "prompt", "group__system_prompt")
    return {
        variant_key(pk): version_key(running[pk]) if pk in running else prompt_identity(system_prompt, prompt)
        for pk, prompt, system_prompt in rows
    }


def prompt_standing(prompt: Prompt, *, n_resamples: int = DEFAULT_RESAMPLES, seed: int = 0) -> list[VersionStanding]:
    """Each version's figures, in version order."""
    versions = prompt_versions(prompt)
    key_of = _key_of(prompt.workspace)
    votes = version_votes(prompt.workspace, key_of)
    rates = {rate.variant: rate for rate in win_rates(encode_votes(votes))} if votes else {}
    ratings = {r.key: r for r in bradley_terry(votes, n_resamples=n_resamples, seed=seed)} if votes else {}
    variants = list(version_variants(versions).select_related("group"))
    standings = []
    for version in versions:
        own = [v for v in variants if v.prompt_version_id == version.pk]
        key = version_key(version.pk)
        standings.append(
            VersionStanding(
                version=version,
                comparisons=len({v.group_id for v in own}),
                win_rate=rates.get(key),
                rating=ratings.get(key),
                judge_scores=_judge_means(own),
                experiments=_experiments(own),
            )
        )
    return standings


def _judge_means(variants: list[Variant]) -> list[JudgeMean]:
    """Mean judge score per judge over the version's answers (each comparison's report judge; judges never mixed)."""
    by_judge: dict[str, list[float]] = {}
    for group in {v.group_id: v.group for v in variants}.values():
        scores = group_judge_scores(group)
        if scores is None:
            continue
        for variant in variants:
            if variant.group_id == group.pk:
                by_judge.setdefault(scores.judge["name"], []).extend(scores.scores.get(variant.pk, {}).values())
    return [JudgeMean(judge, len(values), mean(values)) for judge, values in by_judge.items() if values]


def _experiments(variants: list[Variant]) -> list[ExperimentRun]:
    groups: dict[int, CompareGroup] = {v.group_id: v.group for v in variants}
    runs = []
    for experiment in Experiment.objects.filter(group__in=groups).select_related("group").order_by("-created_at"):
        scores = group_judge_scores(experiment.group)
        own = [v.pk for v in variants if v.group_id == experiment.group_id]
        values = [s for pk in own for s in (scores.scores.get(pk, {}).values() if scores else [])]
        answers = Output.objects.filter(variant__in=own).count()
        score = mean(values) if values else None
        runs.append(ExperimentRun(experiment.group_id, experiment.group.title, answers, score))
    return runs
