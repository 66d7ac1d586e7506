"""Garbage collection for a process that runs many calls: the experiment command, a Celery worker; and for
start-up, when manage.py imports Django and the apps.

Python's collector walks every tracked object in a full collection. After start-up that is most of the process:
Django, the apps, httpx, Celery and their modules, about 130 MB. The collector's default thresholds suit short
scripts. A run of 3,000 calls made about 1,200 young, 110 middle and 10 full collections: 2.3 s of its 20 s of
CPU. Each full one took 110–140 ms, and while it ran no answer was read. Exiting took about 0.5 s more: the
interpreter collects again and again as it tears its modules down.

What start-up built lives as long as the process, so it is frozen (`gc.freeze`: moved where no collection looks).
Young objects are collected after 10,000 allocations instead of 700. A call's garbage is almost all freed by
reference counting as it goes, so a larger young generation costs little memory. Just before exit the rest is
frozen too, so the exit walks nothing (the command). Measured in docs/benchmarks.md.
"""

import gc

_quiet_start_up = False  # start_up_quietly() turned the collector off until start_up_done()

# Allocations between young collections (Python's default is 700), and how many young (middle) collections
# trigger a middle (full) one: Python's own 10 and 10.
YOUNG_THRESHOLD = 10_000
MIDDLE_EVERY, FULL_EVERY = 10, 10


def start_up_quietly() -> None:
    """Call first thing in a process's entry point (manage.py): no collection while Django and the apps are
    imported. Start-up makes about 130,000 objects and almost no garbage (4,000 objects found by a full collection
    after it), yet the default thresholds walked them again and again: 0.1–0.2 s of the experiment command's 0.8 s
    of CPU before it could read its file (2-core VM, 2026-12-06)."""
    global _quiet_start_up
    _quiet_start_up = True
    gc.disable()


def start_up_done() -> None:
    """Called when the apps are ready (lab.apps): what start-up built is frozen, unwalked, and the collector is on
    again with its usual thresholds. Its little garbage is frozen with it rather than paid for with a full walk."""
    global _quiet_start_up
    if _quiet_start_up:
        _quiet_start_up = False
        gc.freeze()
        gc.enable()


def settle_for_a_long_run() -> None:
    """Call once start-up is done and the run is about to begin: what exists now is kept to the end."""
    gc.collect()  # start-up's own garbage, so that it is not frozen with the rest
    gc.freeze()
    gc.set_threshold(YOUNG_THRESHOLD, MIDDLE_EVERY, FULL_EVERY)


def freeze_before_exit() -> None:
    """Call when the process is about to exit: its objects go with it, so no collection needs to walk them."""
    gc.freeze()
