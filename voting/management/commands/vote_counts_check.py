"""Recompute the kept vote counts (voting.models.VoteCount) from the votes and say whether they agree; `--repair`
replaces them by the recount when they do not. Exits 1 when they disagree (and were not repaired)."""

from django.core.management.base import BaseCommand, CommandError

from voting.reports.vote_counts import disagreements
from voting.services import vote_counts_rebuild

SHOWN = 20  # disagreeing kinds listed; the rest are counted


class Command(BaseCommand):
    help = "Check the vote counts that reports read against the votes themselves (--repair to rebuild them)."

    def add_arguments(self, parser):
        parser.add_argument("--repair", action="store_true", help="rebuild the counts from the votes if they differ")

    def handle(self, *args, repair, **options):
        apart = disagreements()
        if not apart:
            self.stdout.write(self.style.SUCCESS("The vote counts agree with the votes."))
            return
        self.stdout.write(f"{len(apart)} kinds of vote (comparison, choice, variant, day) disagree:")
        for each in apart[:SHOWN]:
            self.stdout.write(f"  {each.kind}: kept {each.kept}, the votes give {each.recounted}")
        if len(apart) > SHOWN:
            self.stdout.write(f"  … and {len(apart) - SHOWN} more")
        if not repair:
            raise CommandError("The vote counts disagree with the votes; run again with --repair to rebuild them.")
        kinds = vote_counts_rebuild()
        self.stdout.write(self.style.SUCCESS(f"Rebuilt the vote counts from the votes: {kinds} kinds."))
