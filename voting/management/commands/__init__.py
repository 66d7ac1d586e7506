"""Voting's management commands: demo_setup and vote_counts_check."""
