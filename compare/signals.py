"""Signals compare sends for the apps above it, which it may not import."""

from django.dispatch import Signal

round_finished = Signal()  # kwargs: round_id — sent when a round becomes done, inside the finishing transaction
