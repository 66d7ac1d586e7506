"""The engine's per-process event loop: coroutines handed to it from any thread, cancelled when the wait ends."""

import asyncio
import multiprocessing
import threading

import pytest

from lab.engine.runtime import Runtime, RunTimedOut, runtime


def test_every_caller_thread_runs_its_coroutines_on_the_one_loop_thread():
    engine = runtime()

    async def where() -> tuple[int, asyncio.AbstractEventLoop]:
        return threading.get_ident(), asyncio.get_running_loop()

    seen = []
    callers = [threading.Thread(target=lambda: seen.append(engine.run(where()))) for _ in range(3)]
    for caller in callers:
        caller.start()
    for caller in callers:
        caller.join()

    assert len(set(seen)) == 1
    loop_thread, loop = seen[0]
    assert loop is engine.loop and loop_thread != threading.get_ident()
    assert runtime() is engine


def test_a_wait_that_times_out_cancels_the_coroutine():
    engine = Runtime()
    stopped = threading.Event()

    async def forever() -> None:
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            stopped.set()
            raise

    try:
        with pytest.raises(RunTimedOut):
            engine.run(forever(), timeout=0.1)

        assert stopped.wait(timeout=5), "the coroutine should have been cancelled"
    finally:
        engine.close()
    assert not engine.loop.is_running()


def test_the_coroutines_own_errors_pass_through_unchanged():
    async def fails() -> None:
        raise TimeoutError("the coroutine's own")

    with pytest.raises(TimeoutError, match="the coroutine's own"):
        runtime().run(fails(), timeout=5)


def _child_loop_id(queue) -> None:
    engine = runtime()
    queue.put(engine.run(asyncio.sleep(0, result="ran")))


def test_a_forked_process_gets_a_runtime_of_its_own():
    parent = runtime()
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_child_loop_id, args=(queue,))
    child.start()
    result = queue.get(timeout=20)
    child.join(timeout=20)

    assert result == "ran"  # the parent's loop thread does not exist in the child; a new one ran it
    assert child.exitcode == 0
    assert parent.loop.is_running()
