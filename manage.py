#!/usr/bin/env python
"""Django's command-line utility for Prompt Lab."""

import os
import sys


def main() -> None:
    from lab import gc_tuning

    gc_tuning.start_up_quietly()  # until the apps are ready (lab.gc_tuning)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "promptlab.settings")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
