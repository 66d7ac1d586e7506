"""Run a management command under yappi (every thread, CPU clock) and write its profile: for bench_cpu_per_call.

python bench/profile_command.py OUT.prof experiment run FILE ...   (then: python -m pstats OUT.prof)
"""

import os
import sys
from pathlib import Path

import yappi

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "promptlab.settings")

if __name__ == "__main__":
    import django
    from django.core.management import call_command

    out, *command = sys.argv[1:]
    django.setup()
    yappi.set_clock_type("cpu")
    yappi.start()
    try:
        call_command(*command)
    except SystemExit:
        pass
    finally:
        yappi.stop()
        yappi.get_func_stats().save(out, type="pstat")
