"""`manage.py response_cache_prune`: delete cached answers older than RESPONSE_CACHE_MAX_AGE_DAYS."""

from django.core.management.base import BaseCommand

from compare.response_cache import cache_prune


class Command(BaseCommand):
    help = "Delete cached answers older than RESPONSE_CACHE_MAX_AGE_DAYS (nothing when it is 0)."

    def handle(self, *args, **options):
        self.stdout.write(f"Deleted {cache_prune()} cached answers.")
