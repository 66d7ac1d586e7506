"""The child processes of a run spread over several (`manage.py experiment run --processes N`), both sides.

The parent starts each child as a fresh interpreter running the command's hidden `run-share` action, never as a
fork: a fork after django.setup() would copy the parent's database connections and its engine loop's thread
half-alive. A child prints nothing (only the parent reads and prints progress) and stops as on Ctrl-C when its
standard input closes, which is how the parent stops it, and what happens when the parent dies, however it dies.
A child that stops early leaves its claimed rounds running until their deadline, when the jobs sweeper fails them;
the rounds it had not claimed are still queued, and the other processes take them (runner._RoundFeed).
"""

from __future__ import annotations

import concurrent.futures
import os
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass

from django.conf import settings

SHARE_ACTION = "run-share"
STOP_WAIT_S = 5.0  # how long a child may take to stop once asked, before it is killed
WAIT_STEP_S = 0.5  # how often a child looks whether its parent is still there
EXIT_INTERRUPTED = 130


@dataclass(frozen=True)
class Plan:
    """How much of the run is in flight at once, in one process."""

    rounds: int  # rounds claimed and streaming
    calls: int | None  # calls waiting for a slot or streaming; None: as many as the connections' limits let go
    processes: int = 1  # how many processes share the run, each with its own plan (see the runner's `run_plans`)

    def describe(self) -> str:
        limit = f"up to {self.calls} calls at once" if self.calls else "each connection at its limit"
        return limit if self.processes == 1 else f"{limit}, over {self.processes} processes"


@dataclass(frozen=True)
class Stopped:
    """A child that ended before its share was done: its number (1 is the parent) and how it ended."""

    process: int
    processes: int
    returncode: int

    def describe(self) -> str:
        code = self.returncode
        how = f"killed by {_signal_name(-code)}" if code < 0 else f"exit status {code}"
        return f"Process {self.process} of {self.processes} stopped ({how}) before its share of the run was done."


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


class Children:
    """The parent's side: the child processes of one run, each running one share."""

    def __init__(self, processes: list[subprocess.Popen], shares: int):
        self.processes, self.shares = processes, shares
        self._reported: set[int] = set()

    @classmethod
    def start(cls, *, experiment_id: int, plans: list[Plan], shares: int, debug: bool = False) -> Children:
        """A child for each plan, running shares 1, 2 … (share 0 is the parent's)."""
        processes = []
        for share, plan in enumerate(plans, start=1):
            command = [sys.executable, str(settings.BASE_DIR / "manage.py"), "experiment", SHARE_ACTION]
            command += [str(experiment_id), "--share", str(share), "--shares", str(shares)]
            command += ["--rounds", str(plan.rounds)] + (["--calls", str(plan.calls)] if plan.calls else [])
            command += ["--debug"] if debug else []
            # Its standard error is the parent's: a warning or a crash shows where the parent's would.
            processes.append(
                subprocess.Popen(command, cwd=settings.BASE_DIR, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
            )
        return cls(processes, shares)

    def running(self) -> bool:
        return any(process.poll() is None for process in self.processes)

    def stopped(self) -> list[Stopped]:
        """Children that have ended with a failure since the last call (each is reported once)."""
        found = []
        for number, process in enumerate(self.processes, start=2):
            code = process.poll()
            if code not in (None, 0) and number not in self._reported:
                self._reported.add(number)
                found.append(Stopped(number, self.shares, code))
        return found

    def stop(self) -> None:
        """Ask every child to stop (its input closes), and kill those that have not within STOP_WAIT_S."""
        for process in self.processes:
            if process.stdin is not None:
                process.stdin.close()
        for process in self.processes:
            try:
                process.wait(timeout=STOP_WAIT_S)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


def parent_gone() -> threading.Event:
    """The child's side: an event set once standard input closes (the parent stopped it, or the parent is gone)."""
    gone = threading.Event()

    def watch() -> None:
        # The file descriptor itself: a daemon thread blocked in a buffered read would hold the buffer's lock,
        # which the interpreter needs at exit.
        while os.read(sys.stdin.fileno(), 4096):
            pass
        gone.set()

    threading.Thread(target=watch, name="parent-watch", daemon=True).start()
    return gone


def share_wait(running: concurrent.futures.Future, *, gone: threading.Event) -> int:
    """Wait for the child's share to be done; the exit status. When the parent is gone or on Ctrl-C, the calls in
    flight stop (their rounds are failed by the sweeper at their deadline) and the child exits at once."""
    try:
        while True:
            try:
                running.result(timeout=WAIT_STEP_S)  # a crash in a round's coroutine is a bug: let it surface
                return 0
            except concurrent.futures.TimeoutError:
                if gone.is_set():
                    running.cancel()
                    return EXIT_INTERRUPTED
    except KeyboardInterrupt:
        running.cancel()
        return EXIT_INTERRUPTED
