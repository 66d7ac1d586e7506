"""Reads for voter quality: every person's votes in a workspace turned into the figures of voting.voters.quality,
per person and pooled for the workspace."""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import asdict, dataclass, field

from django.contrib.auth import get_user_model

from compare.blind import blind_order
from compare.models import Output, OutputStatus, Round
from judging.judgement import ONLY_ANSWER
from judging.models import Verdict, VerdictStatus
from lab.models import Membership, Role, Workspace
from lab.stats.votes import ALL_BAD, TIE
from voting.models import Choice, InboxServe, Vote, VoterExclusion

from .quality import agreement_with_judge, agreement_with_majority, flags, outlier_test, position_preference, speed


@dataclass
class VoterRecords:
    """One person's (or everyone's) raw material for the quality figures."""

    votes: int = 0
    majority: list = field(default_factory=list)  # (shown, mine, others)
    judge: list = field(default_factory=list)  # (shown, mine, judge)
    blind_picks: list = field(default_factory=list)  # (column, columns)
    timed: list = field(default_factory=list)  # (words, seconds)
    shares: list = field(default_factory=list)  # (others with the same choice, others, choices) per vote

    def extend(self, other: VoterRecords) -> None:
        self.votes += other.votes
        for name in ("majority", "judge", "blind_picks", "timed", "shares"):
            getattr(self, name).extend(getattr(other, name))


def _choice(choice: str, output_id: int | None) -> str:
    return str(output_id) if choice == Choice.WINNER else TIE if choice == Choice.TIE else ALL_BAD


def workspace_records(workspace: Workspace) -> dict[int, VoterRecords]:
    """Per user id, the records behind their quality figures, from every vote in the workspace."""
    rows = list(
        Vote.objects.filter(group__workspace=workspace)
        .order_by("id")
        .values_list(
            "user_id", "round_id", "choice", "output_id", "created_at", "group__blind", "group_id", "variant_id"
        )
    )
    round_ids = {row[1] for row in rows}
    # Blind mode's shuffle is keyed by the conversation (a later turn shows its first round's order).
    conversations = {
        pk: root_id or pk for pk, root_id in Round.objects.filter(pk__in=round_ids).values_list("pk", "root_id")
    }
    outputs: dict[int, list[tuple[int, str, str]]] = defaultdict(list)
    for round_id, pk, status, text in (
        Output.objects.filter(round_id__in=round_ids)
        .order_by("round_id", "variant__position")
        .values_list("round_id", "pk", "status", "text")
    ):
        outputs[round_id].append((pk, status, text))
    by_round: dict[int, list[tuple[int, str]]] = defaultdict(list)
    # Per comparison, how often each choice (a variant, tie, all bad) was made, in all and by each person.
    in_group: dict[int, Counter] = defaultdict(Counter)
    by_person: dict[tuple[int, int], Counter] = defaultdict(Counter)
    for user_id, round_id, choice, output_id, _, _, group_id, variant_id in rows:
        by_round[round_id].append((user_id, _choice(choice, output_id)))
        in_group[group_id][variant_id or choice] += 1
        by_person[(user_id, group_id)][variant_id or choice] += 1
    judge_choice = _judge_choices(round_ids)
    serves = {
        (user_id, round_id): (served_at, blind)
        for user_id, round_id, served_at, blind in InboxServe.objects.filter(round_id__in=round_ids).values_list(
            "user_id", "round_id", "served_at", "blind"
        )
    }
    records: dict[int, VoterRecords] = defaultdict(VoterRecords)
    for user_id, round_id, choice, output_id, created_at, group_blind, group_id, variant_id in rows:
        record = records[user_id]
        record.votes += 1
        shown = tuple(str(pk) for pk, _, _ in outputs[round_id])
        if len(shown) < 2:
            continue
        own, every = by_person[(user_id, group_id)], in_group[group_id]
        others = sum(every.values()) - sum(own.values())
        mine_kind = variant_id or choice
        record.shares.append((every[mine_kind] - own[mine_kind], others, len(shown) + 2))
        mine = _choice(choice, output_id)
        others = tuple(other_choice for other, other_choice in by_round[round_id] if other != user_id)
        record.majority.append((shown, mine, others))
        if round_id in judge_choice:
            record.judge.append((shown, mine, judge_choice[round_id]))
        served_at, served_blind = serves.get((user_id, round_id), (None, False))
        if output_id is not None and (group_blind or served_blind):
            columns = [pk for pk, _, _ in blind_order(conversations[round_id], user_id, outputs[round_id])]
            record.blind_picks.append((columns.index(output_id), len(columns)))
        if served_at is not None and served_at < created_at:
            words = sum(len(text.split()) for _, status, text in outputs[round_id] if status == OutputStatus.OK)
            record.timed.append((words, (created_at - served_at).total_seconds()))
    return records


def _judge_choices(round_ids: set[int]) -> dict[int, str]:
    """The latest finished verdict's choice per round (a winner's output id, or TIE), walkovers left out."""
    choices = {}
    verdicts = (
        Verdict.objects.filter(round_id__in=round_ids, status=VerdictStatus.DONE)
        .exclude(decided_by=ONLY_ANSWER)
        .order_by("round_id", "id")
        .values_list("round_id", "winner_id")
    )
    for round_id, winner_id in verdicts:
        choices[round_id] = str(winner_id) if winner_id else TIE
    return choices


def _figures(value) -> dict:
    """A result as a dict, with a figure that is undefined for these data (kappa's interval when one side only ever
    made one choice: a zero variance) as None rather than NaN."""
    return {key: None if isinstance(x, float) and not math.isfinite(x) else x for key, x in asdict(value).items()}


def quality_of(records: VoterRecords, voters: int) -> dict:
    majority = agreement_with_majority(records.majority)
    position = position_preference(records.blind_picks)
    pace = speed(records.timed)
    outlier = outlier_test(records.shares, voters)
    return {
        "votes": records.votes,
        "agreement_with_majority": _figures(majority),
        "agreement_with_judge": _figures(agreement_with_judge(records.judge)),
        "position_preference": _figures(position),
        "speed": _figures(pace),
        "outlier": _figures(outlier),
        "flags": [asdict(flag) for flag in flags(majority=majority, position=position, pace=pace, outlier=outlier)],
    }


def voter_quality(workspace: Workspace) -> dict:
    """Every voter of the workspace with their figures and flags (most votes first), and the workspace pooled."""
    records = workspace_records(workspace)
    users = get_user_model().objects.in_bulk(list(records))
    exclusions = {row.user_id: row for row in VoterExclusion.objects.filter(workspace=workspace)}
    pooled = VoterRecords()
    voters = []
    for user_id, record in sorted(records.items(), key=lambda item: (-item[1].votes, users[item[0]].username)):
        pooled.extend(record)
        excluded = exclusions.get(user_id)
        voters.append(
            {
                "user": user_id,
                "username": users[user_id].username,
                "excluded": excluded is not None,
                "exclusion_reason": excluded.reason if excluded else None,
                **quality_of(record, len(records)),
            }
        )
    return {"workspace": workspace.pk, "voters": voters, "overall": quality_of(pooled, len(records))}


def voter_quality_for(membership: Membership) -> dict:
    """`voter_quality` as this member may see it: an owner sees every voter (figures and flags), anyone else only
    their own entry; the workspace's pooled figures are for everyone."""
    quality = voter_quality(membership.workspace)
    if not membership.allows(Role.OWNER):
        quality["voters"] = [voter for voter in quality["voters"] if voter["user"] == membership.user_id]
    return quality
