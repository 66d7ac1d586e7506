"""A cancel that Python 3.11 lost on the way, raised again by the loops that would otherwise never end.

On Python 3.11, asyncio.wait_for returns normally when its caller is cancelled just as the awaited work finishes
(fixed in 3.12), and redis-py sends every command through wait_for. A loop that waits on Redis until it is
cancelled (a slot waiter, a lease keeper, a socket's membership renewal) then goes on forever: a queue deadline
or a round's time limit that fired during a send never takes effect. The task still counts the request
(`Task.cancelling()`), so each such loop asks before it goes round again.
"""

import asyncio


def raise_if_cancelled() -> None:
    """Raise CancelledError if this task was asked to stop and has not been told yet."""
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError
