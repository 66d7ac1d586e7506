#!/usr/bin/env python
"""Django's command-line utility for Prompt Lab."""

import os
import sys
import types


def main() -> None:
    from lab import gc_tuning

    gc_tuning.start_up_quietly()  # until the apps are ready (lab.gc_tuning)
    # httpx imports its command-line client when click and Pygments are installed (and rich, a test tool's): 40 ms
    # of every command's start-up, for a client the lab never runs. With an empty module in its place httpx takes
    # its own fallback (its `main` says the client is not installed).
    sys.modules.setdefault("httpx._main", types.ModuleType("httpx._main"))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "promptlab.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
