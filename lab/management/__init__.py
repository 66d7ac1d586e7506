"""The lab's management commands."""
