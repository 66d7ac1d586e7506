"""Voting's template filters (the report pages)."""
