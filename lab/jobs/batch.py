"""Starting a batch job from its task: handed to this process's engine loop, the task's thread free at once.

At most SCHEDULER_BATCH_JOBS_PER_PROCESS jobs run at once per process (lab.engine.admission). When the process is
full and one of its threads already waits for room, the job's message goes back to its queue for another worker
(or this one, SCHEDULER_BATCH_RESEND_S later), so the other threads stay free for interactive work. A job handed
over but not yet claimed when its process dies is still queued in the database: its message was acknowledged, so
the sweeper sends it again as lost.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from django.conf import settings

from lab.engine.runtime import Runtime, runtime

from .enqueue import send


def batch_start(kind_name: str, key: Any, job: Callable[[Runtime], Coroutine[Any, Any, Any]]) -> bool:
    """Start `job(engine)` on the loop and return; False when it went back to the queue instead."""
    engine = runtime()
    if engine.batch.admit(lambda: job(engine)):
        return True
    send(kind_name, key, countdown=settings.SCHEDULER_BATCH_RESEND_S)
    return False


def batch_start_sync(kind_name: str, key: Any, function: Callable[..., Any], **kwargs: Any) -> bool:
    """The same for job code that is synchronous: it runs on one of the engine's job threads, not the task's."""
    return batch_start(kind_name, key, lambda engine: engine.in_thread(function, **kwargs))
