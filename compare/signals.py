"""Signals compare sends for the apps above it, which it may not import."""

from django.dispatch import Signal

# kwargs: round_ids, the rounds that became done (one statement may finish many), and lanes, each one's lane (id →
# lane); sent inside that transaction
round_finished = Signal()
