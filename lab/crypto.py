"""Encryption of secrets at rest (provider API keys) with MultiFernet, so keys can be rotated."""

import base64
from functools import lru_cache

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from django.conf import settings


class SecretDecryptionError(Exception):
    """A stored secret could not be decrypted with any configured key (the key was removed)."""


def _derived_key() -> bytes:
    # Only for a lab without FIELD_ENCRYPTION_KEYS (embedded demo): still ciphertext at rest, bound to SECRET_KEY.
    hkdf = HKDF(algorithm=hashes.SHA256(), length=32, salt=b"promptlab-field-encryption", info=b"v1")
    return base64.urlsafe_b64encode(hkdf.derive(settings.SECRET_KEY.encode()))


@lru_cache(maxsize=4)
def _fernet(keys: tuple[str, ...]) -> MultiFernet:
    material = [k.encode() for k in keys] or [_derived_key()]
    return MultiFernet([Fernet(k) for k in material])


def fernet() -> MultiFernet:
    return _fernet(tuple(settings.FIELD_ENCRYPTION_KEYS))


def encrypt(plaintext: str) -> str:
    return fernet().encrypt(plaintext.encode()).decode()


def decrypt(ciphertext: str) -> str:
    try:
        return fernet().decrypt(ciphertext.encode()).decode()
    except InvalidToken as exc:
        raise SecretDecryptionError("A stored secret cannot be decrypted with the configured keys.") from exc


def rotate(ciphertext: str) -> str:
    """Re-encrypt with the newest key (the first of FIELD_ENCRYPTION_KEYS)."""
    return fernet().rotate(ciphertext.encode()).decode()


def mask(secret: str) -> str:
    """A hint that lets a person recognise a key without revealing it."""
    if not secret:
        return ""
    if len(secret) < 12:
        return "••••"
    return f"{secret[:3]}…{secret[-4:]}"
