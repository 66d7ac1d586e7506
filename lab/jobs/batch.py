"""Starting a batch job from its task: handed to this process's engine loop, the task's thread free at once.

At most SCHEDULER_BATCH_JOBS_PER_PROCESS jobs run at once per process (lab.engine.admission). When the process is
full and one of its threads already waits for room, the job's message goes back to its queue for another worker
(or this one, SCHEDULER_BATCH_RESEND_S later), so the other threads stay free for interactive work. A job handed
over but not yet claimed when its process dies is still queued in the database: its message was acknowledged, so
the sweeper sends it again as lost.

While its process is full, a worker stops consuming the batch queues it found full (and starts again once a job
ends), so the batch backlog stays in Redis for other workers instead of cycling through this one's threads.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from django.conf import settings

from lab.engine.runtime import Runtime, batch_jobs_per_process, runtime

from .enqueue import send

_consumer: Any = None  # the Celery worker's consumer in this process, once it is ready
_full_queues: set[str] = set()  # batch queues a message came from while this process was full


def batch_consumer_attach(consumer: Any) -> None:
    """Called when the worker is ready: lets a full process stop and restart consuming its batch queues."""
    global _consumer
    _consumer = consumer
    engine = runtime()
    engine.batch.limit = batch_jobs_per_process(consumer.controller.concurrency)  # its -c, not only the setting
    engine.batch.on_room = _consume_as_room_allows


def _consume_as_room_allows() -> None:
    if _consumer is not None and _full_queues:
        _consumer.call_soon(_sync_queues)  # consumers are changed on the consumer's own thread


def _sync_queues() -> None:
    full = runtime().batch.full()
    for queue in sorted(_full_queues):
        consuming = _consumer.task_consumer.consuming_from(queue)
        if full and consuming:
            _consumer.cancel_task_queue(queue)
        elif not full and not consuming:
            _consumer.add_task_queue(queue)


def batch_start(
    kind_name: str, key: Any, job: Callable[[Runtime], Coroutine[Any, Any, Any]], *, queue: str | None = None
) -> bool:
    """Start `job(engine)` on the loop and return; False when it went back to `queue` (the one its message came
    from; its lane's when not known) instead."""
    engine = runtime()
    if engine.batch.full() and queue is not None and _consumer is not None:
        _full_queues.add(queue)
        _consumer.call_soon(_sync_queues)
    if engine.batch.admit(lambda: job(engine)):
        return True
    send(kind_name, key, countdown=settings.SCHEDULER_BATCH_RESEND_S, queue=queue)
    return False


def batch_start_sync(
    kind_name: str, key: Any, function: Callable[..., Any], *, queue: str | None = None, **kwargs: Any
) -> bool:
    """The same for job code that is synchronous: it runs on one of the engine's job threads, not the task's."""
    return batch_start(kind_name, key, lambda engine: engine.in_thread(function, **kwargs), queue=queue)


def queue_of(task: Any) -> str | None:
    """The queue the bound task's current message came from (its routing key on the direct exchanges we use)."""
    return (task.request.delivery_info or {}).get("routing_key")
