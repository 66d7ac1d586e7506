"""Every thread that sends a job's message shares the Celery app's one result backend.

Celery builds a backend per thread unless told it is thread-safe, and building one scans every installed package's
entry points; Django runs each ASGI request's sync code on a thread of its own, so without the setting each round
started from the API paid that scan before its message left.
"""

import threading

from promptlab.celery import app


def backend_seen_from_new_threads(count: int) -> list[object]:
    seen: list[object] = []
    for _ in range(count):
        thread = threading.Thread(target=lambda: seen.append(app.backend))
        thread.start()
        thread.join()
    return seen


def test_threads_that_send_messages_share_one_result_backend():
    backends = backend_seen_from_new_threads(3) + [app.backend]

    assert all(backend is backends[0] for backend in backends)
