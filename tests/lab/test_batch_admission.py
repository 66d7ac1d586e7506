"""The batch cap of one process: jobs handed to the engine loop up to the cap without waiting, then one thread waits
for room while any other is turned away at once (its message goes back to the queue), and a warm shutdown waits
for the jobs in flight. A job whose calls have all gone gives its place to the next while it streams on, and a job
whose connections need more jobs to stay full makes room for them while it waits."""

import asyncio
import threading

from lab.engine.admission import BatchAdmission, place_ahead, place_free
from lab.engine.runtime import runtime


def blocked_job(release: asyncio.Event, started: list[int], n: int):
    async def job() -> None:
        started.append(n)
        await release.wait()

    return job


def test_a_full_process_lets_one_thread_wait_and_turns_the_next_away():
    engine = runtime()
    admission = BatchAdmission(engine.loop, limit=2)
    release = engine.run(_event())
    started: list[int] = []

    assert admission.admit(blocked_job(release, started, 1)) and admission.admit(blocked_job(release, started, 2))
    assert admission.full()
    waiting = threading.Thread(target=admission.admit, args=(blocked_job(release, started, 3),))
    waiting.start()
    _until(lambda: admission._waiter.locked())

    assert admission.admit(blocked_job(release, started, 4)) is False  # another thread already waits: turned away
    _until(lambda: len(started) == 2)
    assert sorted(started) == [1, 2]  # the waiting one has not started
    engine.loop.call_soon_threadsafe(release.set)
    waiting.join(timeout=5)
    assert not waiting.is_alive()
    assert admission.drain(timeout_s=5) == 0
    assert sorted(started) == [1, 2, 3]


def test_a_warm_shutdown_waits_for_the_jobs_in_flight_no_longer_than_it_is_given():
    engine = runtime()
    admission = BatchAdmission(engine.loop, limit=4)
    release = engine.run(_event())
    admission.admit(blocked_job(release, [], 1))

    assert admission.drain(timeout_s=0.2) == 1
    engine.loop.call_soon_threadsafe(release.set)
    assert admission.drain(timeout_s=5) == 0


def test_a_job_whose_calls_have_gone_leaves_its_place_to_the_next_while_it_runs():
    engine = runtime()
    admission = BatchAdmission(engine.loop, limit=1)
    release = engine.run(_event())

    async def sent_then_streaming() -> None:
        place_free()  # its calls have all been sent: it waits for no connection any more
        await release.wait()

    assert admission.admit(sent_then_streaming)
    _until(lambda: admission.held == 0)
    assert not admission.full() and admission.in_flight == 1  # still running, holding no place
    assert admission.admit(blocked_job(release, [], 2))
    assert admission.full()
    engine.loop.call_soon_threadsafe(release.set)
    assert admission.drain(timeout_s=5) == 0


def test_a_waiting_job_makes_room_for_as_many_as_fill_its_connections_and_takes_it_away_when_it_goes():
    engine = runtime()
    admission = BatchAdmission(engine.loop, limit=1)
    sent, release = engine.run(_event()), engine.run(_event())

    async def waiting_for_its_connection() -> None:
        place_ahead(3)  # three jobs like it fill its connections
        await sent.wait()
        place_free()
        await release.wait()

    assert admission.admit(waiting_for_its_connection)
    _until(lambda: admission.room() == 3)
    assert admission.admit(blocked_job(release, [], 2)) and admission.admit(blocked_job(release, [], 3))
    assert admission.full()
    engine.loop.call_soon_threadsafe(sent.set)  # its calls went: its place and the room it made go with it
    _until(lambda: admission.room() == 1)
    assert admission.full()  # the two others hold places beyond the cap of one until they leave
    engine.loop.call_soon_threadsafe(release.set)
    assert admission.drain(timeout_s=5) == 0
    assert admission.held == 0 and not admission.full()


async def _event() -> asyncio.Event:
    return asyncio.Event()  # made on the loop that waits on it


def _until(condition, timeout: float = 5) -> None:
    done = threading.Event()
    for _ in range(int(timeout / 0.01)):
        if condition():
            return
        done.wait(0.01)
    raise AssertionError("condition never held")
