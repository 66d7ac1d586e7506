"""Compare's management commands."""
