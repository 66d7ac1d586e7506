"""Votes: one per person per round, for an answer or for "tie" / "all bad"; voting again replaces it."""

from django.conf import settings
from django.db import models
from django.db.models import F, Q, Value
from django.db.models.functions import Coalesce

from compare.models import CompareGroup, Output, Round, Variant


class Choice(models.TextChoices):
    WINNER = "winner", "Winner"
    TIE = "tie", "Tie"
    ALL_BAD = "all_bad", "All bad"


class Vote(models.Model):
    round = models.ForeignKey(Round, on_delete=models.CASCADE, related_name="votes")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="votes")
    choice = models.CharField(max_length=10, choices=Choice.choices)
    output = models.ForeignKey(Output, null=True, blank=True, on_delete=models.CASCADE, related_name="votes")
    # Copies of round.group and output.variant (neither changes once written), so the votes are counted per
    # comparison and winner (VoteCount) and read vote by vote from one index of this table, with no join to rounds
    # and answers (voting/reports/comparison.py). vote_cast writes them with the vote. The database checks that a
    # winner, and only a winner, has a variant; that the copies agree with the round and the answer rests on
    # vote_cast (a check across tables would need keys on compare's tables).
    group = models.ForeignKey(CompareGroup, on_delete=models.CASCADE, related_name="+", db_index=False)
    variant = models.ForeignKey(Variant, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            # Also serves "the votes of a round" (tallies) and "my vote in this round" (blind reveal).
            models.UniqueConstraint(fields=["round", "user"], name="vote_one_per_user"),
            models.CheckConstraint(
                condition=(Q(choice=Choice.WINNER) & Q(output__isnull=False))
                | (Q(choice__in=[Choice.TIE, Choice.ALL_BAD]) & Q(output__isnull=True)),
                name="vote_winner_names_an_output",
            ),
            models.CheckConstraint(
                condition=Q(output__isnull=True, variant__isnull=True) | Q(output__isnull=False, variant__isnull=False),
                name="vote_winner_names_its_variant",
            ),
        ]
        indexes = [
            # A comparison's votes in cast order (voting.reports.comparison.group_round_votes), read from the index
            # alone once vacuumed: the included columns spare a visit to the table per vote (figures in
            # docs/benchmarks.md).
            models.Index(fields=["group", "id"], include=["choice", "variant"], name="vote_group_cast_order"),
        ]

    def __str__(self) -> str:
        return f"{self.user} on {self.round}: {self.output_id or self.choice}"


class VoteCount(models.Model):
    """How many votes a comparison has of one kind (its choice and winner's variant) first cast on one day (UTC):
    what reports and leaderboards read instead of the votes themselves (voting.reports.vote_counts).

    Database triggers on the votes table keep it (migration 0007): every insert, change and delete of votes, by any
    path (vote_cast, the inbox's undo, deletes cascading from comparisons, rounds, answers, users, a raw UPDATE),
    adds to or takes from these counts in the same transaction, by increments in the database, so concurrent votes
    all count. `manage.py vote_counts_check` recomputes them from the votes and says whether they agree. A kind
    whose votes were all withdrawn keeps its row at zero."""

    group = models.ForeignKey(CompareGroup, on_delete=models.CASCADE, related_name="+", db_index=False)
    choice = models.CharField(max_length=10, choices=Choice.choices)
    variant = models.ForeignKey(Variant, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    # Vote.created_at's date in UTC: a replaced vote keeps the day it was first cast (the leaderboard's date filter).
    day = models.DateField()
    votes = models.IntegerField()

    class Meta:
        constraints = [
            # The triggers' upsert target (ON CONFLICT names these expressions); it also serves "a comparison's
            # counts" (the report) and "a workspace's counts" (the leaderboard, by its comparisons). COALESCE: a
            # tie has no variant, and NULLs would never conflict.
            models.UniqueConstraint(
                F("group"), F("choice"), Coalesce(F("variant"), Value(0)), F("day"), name="vote_count_one_per_kind"
            ),
            models.CheckConstraint(condition=Q(votes__gte=0), name="vote_count_not_negative"),
            models.CheckConstraint(
                condition=(Q(choice=Choice.WINNER) & Q(variant__isnull=False))
                | (Q(choice__in=[Choice.TIE, Choice.ALL_BAD]) & Q(variant__isnull=True)),
                name="vote_count_winner_names_its_variant",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.group_id} {self.variant_id or self.choice} on {self.day}: {self.votes}"


class InboxServe(models.Model):
    """When the "To vote" inbox last showed a round to a person: the start of their reading time (voter quality's
    words per second) and, while it is their latest and they have not voted, a hold that keeps the inbox from
    serving the same round to someone else (voting.inbox)."""

    round = models.ForeignKey(Round, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    served_at = models.DateTimeField()
    blind = models.BooleanField(default=True)  # shown shuffled and unnamed (voter quality's position preference)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["round", "user"], name="inbox_serve_one_per_user")]
        indexes = [
            # "What is open in the inbox right now": recent serves (voting.inbox.selectors.held_by_others).
            models.Index(fields=["served_at"], name="inbox_serve_recent"),
        ]

    def __str__(self) -> str:
        return f"{self.round} shown to {self.user} at {self.served_at:%Y-%m-%d %H:%M:%S}"


class InboxSkip(models.Model):
    """A round a person skipped in the inbox: never served to them again, until they undo it."""

    round = models.ForeignKey(Round, on_delete=models.CASCADE, related_name="inbox_skips")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["round", "user"], name="inbox_skip_one_per_user")]

    def __str__(self) -> str:
        return f"{self.user} skipped {self.round}"


class VoterExclusion(models.Model):
    """An owner's decision that a person's votes in a workspace are left out of its reports and leaderboards."""

    workspace = models.ForeignKey("lab.Workspace", on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    reason = models.CharField(max_length=300)
    excluded_by = models.ForeignKey(settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["workspace", "user"], name="voter_exclusion_one_per_workspace"),
            models.CheckConstraint(condition=~Q(reason=""), name="voter_exclusion_has_reason"),
        ]

    def __str__(self) -> str:
        return f"{self.user} excluded: {self.reason}"


class ConversationVote(models.Model):
    """One person's vote on a whole conversation (docs/conversations.md): which column's conversation was best,
    cast at one of its later turns (`turn`, whose answer names the column) and kept once per conversation (`root`,
    its first round); voting again replaces it. Kept apart from `Vote`, so the reports' per-turn counts never
    include it: each turn's vote is one comparison, and conversation votes are shown beside them, counted once."""

    root = models.ForeignKey(Round, on_delete=models.CASCADE, related_name="+")
    turn = models.ForeignKey(Round, on_delete=models.CASCADE, related_name="+")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+")
    choice = models.CharField(max_length=10, choices=Choice.choices)
    output = models.ForeignKey(Output, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    variant = models.ForeignKey(Variant, null=True, blank=True, on_delete=models.CASCADE, related_name="+")
    group = models.ForeignKey(CompareGroup, on_delete=models.CASCADE, related_name="+")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            # Also serves "my vote on this conversation".
            models.UniqueConstraint(fields=["root", "user"], name="conversation_vote_one_per_user"),
            models.CheckConstraint(
                condition=(Q(choice=Choice.WINNER) & Q(output__isnull=False) & Q(variant__isnull=False))
                | (Q(choice__in=[Choice.TIE, Choice.ALL_BAD]) & Q(output__isnull=True) & Q(variant__isnull=True)),
                name="conversation_vote_winner_names_an_output",
            ),
        ]
        indexes = [
            # A comparison's conversation votes (the report's separate line).
            models.Index(fields=["group"], name="conversation_vote_group"),
        ]

    def __str__(self) -> str:
        return f"{self.user} on conversation {self.root_id}: {self.output_id or self.choice}"
