"""Celery beat's scheduler: the jobs sweep runs in the beat process itself, every other entry goes to a worker.

The sweep is what bounds the work of a worker that died, so it must not need a worker: sent to a queue, it waited
there with the rounds it should have failed when no worker was alive. Beat runs it in its own process (embedded
mode: in the web process's beat thread) and hands the rest of the schedule to the workers as before.
"""

from __future__ import annotations

from celery import beat
from django.db import close_old_connections

# Task names beat runs itself instead of sending them to a worker.
RUN_IN_BEAT = frozenset({"lab.sweep_jobs"})


class Scheduler(beat.PersistentScheduler):
    def apply_async(self, entry, producer=None, advance=True, **kwargs):
        if entry.task not in RUN_IN_BEAT:
            return super().apply_async(entry, producer=producer, advance=advance, **kwargs)
        entry = self.reserve(entry) if advance else entry
        try:
            # Eager: runs here; an exception is logged and kept on the result, so the schedule goes on.
            return self.app.tasks[entry.task].apply(entry.args, entry.kwargs)
        finally:
            close_old_connections()  # as after a worker's task: the connection goes back to the pool between sweeps
