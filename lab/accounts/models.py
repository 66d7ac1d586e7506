"""Password attempts in flight or failed, kept for the guessing limits (lab/accounts/limits.py)."""

from django.db import models
from django.utils import timezone


class PasswordAttempt(models.Model):
    """One password presented for an account from an address: deleted when it was right, kept when it was wrong.

    The account is a hash of the name or address typed (lower-cased), so a typo or an unknown name is counted too
    and no login name is stored in clear."""

    account = models.CharField(max_length=64)
    address = models.CharField(max_length=64)
    at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [
            # The limits count an account's and an address's attempts within the window.
            models.Index(fields=["account", "at"], name="passwordattempt_account_at"),
            models.Index(fields=["address", "at"], name="passwordattempt_address_at"),
            # Attempts older than the window are deleted by age.
            models.Index(fields=["at"], name="passwordattempt_at"),
        ]

    def __str__(self) -> str:
        return f"{self.account[:8]} from {self.address} at {self.at:%H:%M:%S}"
