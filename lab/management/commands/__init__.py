"""The lab's management commands: rotate_encryption_keys."""
