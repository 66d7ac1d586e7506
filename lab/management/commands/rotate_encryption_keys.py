"""Re-encrypt every stored API key with the newest key in FIELD_ENCRYPTION_KEYS."""

from django.core.management.base import BaseCommand

from lab.services import connection_keys_rotate


class Command(BaseCommand):
    help = "Re-encrypt stored API keys with the first (newest) key of FIELD_ENCRYPTION_KEYS."

    def handle(self, *args, **options):
        count = connection_keys_rotate()
        self.stdout.write(self.style.SUCCESS(f"Re-encrypted {count} key(s) with the newest key."))
