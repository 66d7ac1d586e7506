"""Word-level diffs (stdlib difflib) of prompts and answers, rendered safely: every piece of text is escaped before
it is wrapped in <ins> / <del>, so hostile text stays text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher

from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe

# Words, runs of whitespace and single punctuation marks: whitespace is kept, so joining the pieces gives the text.
TOKEN = re.compile(r"\s+|\w+|[^\w\s]")
EQUAL, INSERT, DELETE = "equal", "insert", "delete"


@dataclass(frozen=True)
class Piece:
    op: str  # equal, insert or delete
    text: str


@dataclass(frozen=True)
class SideBySide:
    """One diff as two columns: the old text with deletions marked, the new one with insertions marked."""

    old: SafeString
    new: SafeString
    changed: bool
    inserted_words: int
    deleted_words: int


def tokens(text: str) -> list[str]:
    return TOKEN.findall(text or "")


def word_diff(old: str, new: str) -> list[Piece]:
    """The changes from `old` to `new`, word by word; joining the equal and delete pieces gives `old`, the equal and
    insert pieces `new`. Whitespace alone between two changes counts as changed, so "one line" → "two lines" reads
    as one replacement rather than two with a space kept between them."""
    a, b = tokens(old), tokens(new)
    opcodes = SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    deleted: list[str] = []
    inserted: list[str] = []
    pieces: list[Piece] = []

    def flush() -> None:
        if deleted:
            pieces.append(Piece(DELETE, "".join(deleted)))
        if inserted:
            pieces.append(Piece(INSERT, "".join(inserted)))
        deleted.clear()
        inserted.clear()

    for index, (op, i1, i2, j1, j2) in enumerate(opcodes):
        same = "".join(a[i1:i2])
        between_changes = 0 < index < len(opcodes) - 1 and opcodes[index + 1][0] != "equal"
        if op == "equal" and not (between_changes and deleted + inserted and not same.strip()):
            flush()
            pieces.append(Piece(EQUAL, same))
            continue
        deleted.extend(a[i1:i2])
        inserted.extend(b[j1:j2])
    flush()
    return pieces


def _mark(piece: Piece) -> str:
    text = escape(piece.text)
    if piece.op == INSERT:
        return f'<ins class="diff-ins">{text}</ins>'
    if piece.op == DELETE:
        return f'<del class="diff-del">{text}</del>'
    return text


def _words(pieces: list[Piece], op: str) -> int:
    return sum(len(re.findall(r"\w+", piece.text)) for piece in pieces if piece.op == op)


def inline_html(old: str, new: str) -> SafeString:
    """One column: deletions struck through, insertions underlined, in reading order."""
    return mark_safe("".join(_mark(piece) for piece in word_diff(old, new)))  # noqa: S308 - every piece is escaped


def side_by_side(old: str, new: str) -> SideBySide:
    pieces = word_diff(old, new)
    return SideBySide(
        old=mark_safe("".join(_mark(p) for p in pieces if p.op != INSERT)),  # noqa: S308 - escaped in _mark
        new=mark_safe("".join(_mark(p) for p in pieces if p.op != DELETE)),  # noqa: S308 - escaped in _mark
        changed=any(p.op != EQUAL for p in pieces),
        inserted_words=_words(pieces, INSERT),
        deleted_words=_words(pieces, DELETE),
    )
