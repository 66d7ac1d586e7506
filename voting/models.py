"""Votes: one per person per round, for an answer or for "tie" / "all bad"; voting again replaces it."""

from django.conf import settings
from django.db import models
from django.db.models import Q

from compare.models import Output, Round


class Choice(models.TextChoices):
    WINNER = "winner", "Winner"
    TIE = "tie", "Tie"
    ALL_BAD = "all_bad", "All bad"


class Vote(models.Model):
    round = models.ForeignKey(Round, on_delete=models.CASCADE, related_name="votes")
    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="votes")
    choice = models.CharField(max_length=10, choices=Choice.choices)
    output = models.ForeignKey(Output, null=True, blank=True, on_delete=models.CASCADE, related_name="votes")
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
        ]

    def __str__(self) -> str:
        return f"{self.user} on {self.round}: {self.output_id or self.choice}"
