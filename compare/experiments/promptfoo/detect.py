"""Whether parsed data is a promptfoo config rather than the lab's own experiment file.

promptfoo's configs have `providers` (or `targets`) and `tests`/`prompts`; the lab's own files have `models` and never
`providers`, so the presence of `providers`/`targets`/`tests`/`defaultTest` decides.
"""

from __future__ import annotations

from typing import Any

# Keys the lab's own format never has and every promptfoo config has at least one of.
PROMPTFOO_MARKERS = ("providers", "targets", "tests", "defaultTest", "evaluateOptions")


def is_promptfoo(data: Any) -> bool:
    return isinstance(data, dict) and "models" not in data and any(key in data for key in PROMPTFOO_MARKERS)
