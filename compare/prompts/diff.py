"""Word-level diffs (stdlib difflib) of prompts and answers, and message-by-message diffs of message lists, rendered
safely: every piece of text is escaped before it is wrapped in <ins> / <del>, so hostile text stays text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from functools import cached_property

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


ADDED, REMOVED, CHANGED = "added", "removed", "changed"


@dataclass(frozen=True)
class MessageChange:
    """One message of a message-by-message diff: the same (equal), edited (changed: role or text), added or removed.
    Positions count from 1 in each list; a side the message is not on is None."""

    op: str  # equal, changed, added or removed
    old_position: int | None
    new_position: int | None
    old_role: str | None
    new_role: str | None
    old_text: str  # "" when added
    new_text: str  # "" when removed

    @cached_property
    def diff(self) -> SideBySide:
        """Of the content: an added message is all inserted, a removed one all deleted."""
        return side_by_side(self.old_text, self.new_text)


def messages_diff(old: list[dict[str, str]], new: list[dict[str, str]]) -> list[MessageChange]:
    """The changes from `old` to `new`, message by message, in reading order. Unchanged messages are matched first
    (difflib on role and text); between two matches, messages are paired as changed where that keeps the order and
    makes the closest pairs (`_pairs`), and the rest are removed or added."""
    a = [(m["role"], m["content"]) for m in old]
    b = [(m["role"], m["content"]) for m in new]
    changes: list[MessageChange] = []
    for op, i1, i2, j1, j2 in SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if op == "equal":
            changes += [_change(EQUAL, a, b, i1 + k, j1 + k) for k in range(i2 - i1)]
            continue
        for i, j in _pairs(a[i1:i2], b[j1:j2]):
            op = CHANGED if i is not None and j is not None else REMOVED if j is None else ADDED
            changes.append(_change(op, a, b, None if i is None else i1 + i, None if j is None else j1 + j))
    return changes


def _change(op: str, a: list[tuple[str, str]], b: list[tuple[str, str]], i: int | None, j: int | None) -> MessageChange:
    old_role, old_text = a[i] if i is not None else (None, "")
    new_role, new_text = b[j] if j is not None else (None, "")
    positions = (i + 1 if i is not None else None, j + 1 if j is not None else None)
    return MessageChange(op, *positions, old_role, new_role, old_text, new_text)


# A pair's likeness is the share of words in common, plus a little when the roles agree. Messages of one role may
# always pair (an edited few-shot answer reads as a change, not a removal and an addition), of two roles only when
# they are mostly the same text; the pairing with the greatest total likeness wins, so a message pairs with the one
# most like it rather than with whichever stands at its position.
SAME_ROLE = 0.05
PAIRABLE = 0.5
UNPAIRABLE = -1.0


def _likeness(old: tuple[str, str], new: tuple[str, str]) -> float:
    words = SequenceMatcher(None, tokens(old[1]), tokens(new[1]), autojunk=False).ratio()
    if old[0] == new[0]:
        return words + SAME_ROLE
    return words if words >= PAIRABLE else UNPAIRABLE


def _pairs(a: list[tuple[str, str]], b: list[tuple[str, str]]) -> list[tuple[int | None, int | None]]:
    """The order-keeping pairing of two runs of messages with the greatest total likeness (dynamic programming over
    the runs, which are short): (i, j) a pair, (i, None) removed, (None, j) added, in reading order."""
    n, m = len(a), len(b)
    best = [[0.0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            like = _likeness(a[i], b[j])
            paired = like + best[i + 1][j + 1] if like > UNPAIRABLE else UNPAIRABLE
            best[i][j] = max(paired, best[i + 1][j], best[i][j + 1])
    steps: list[tuple[int | None, int | None]] = []
    i = j = 0
    while i < n or j < m:
        like = _likeness(a[i], b[j]) if i < n and j < m else UNPAIRABLE
        if like > UNPAIRABLE and best[i][j] == like + best[i + 1][j + 1]:
            steps.append((i, j))
            i, j = i + 1, j + 1
        elif i < n and (j == m or best[i][j] == best[i + 1][j]):
            steps.append((i, None))
            i += 1
        else:
            steps.append((None, j))
            j += 1
    return steps
