"""Voting's management commands."""
