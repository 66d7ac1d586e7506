"""The command line's answer blocks: a field's value is wrapped under itself exactly as textwrap wraps it."""

import textwrap

from hypothesis import given, settings
from hypothesis import strategies as st

from compare.experiments import report

INDENT = "│" + " " * (report.NAME_WIDTH + 2)


def _wrapped_by_textwrap(label: str, text: str) -> list[str]:
    lines = textwrap.wrap(text, width=report.TEXT_WIDTH, break_long_words=False, break_on_hyphens=False) or [""]
    return [f"│{label.rjust(report.NAME_WIDTH)}: {lines[0]}", *(INDENT + line for line in lines[1:])]


# Short values take a path of their own (most fields of most answers); both must print what textwrap prints,
# whitespace of every kind at either end and inside included.
@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.sampled_from([*"ab -", "\t", "\n", "\r", "\x0b", "\xa0", "é", "—"]), max_size=150))
def test_a_value_prints_as_textwrap_wraps_it_whatever_its_length_and_whitespace(text):
    assert report._field("Reason", text) == _wrapped_by_textwrap("Reason", text)


def test_a_short_value_stays_on_its_line_and_a_long_one_wraps_under_itself():
    assert report._field("Model", "fake:echo") == [f"│{'Model'.rjust(report.NAME_WIDTH)}: fake:echo"]
    long = " ".join(["word"] * 30)
    lines = report._field("Reason", long)
    assert len(lines) == 3 and all(line.startswith(INDENT) for line in lines[1:])
