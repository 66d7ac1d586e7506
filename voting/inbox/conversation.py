"""The conversation so far, as the inbox shows a later turn: what was asked before (shared by every column) and
each column's own earlier answers, blind-safe.

A later turn's columns keep their place and their "Answer A…" name across the conversation (compare.blind orders
them by the conversation, per person), and each answer's earlier turns are read from its own messages
(compare.page_selectors.earlier_turns, through compare.rounds.continuing.split_turns): so an earlier answer always
shows in the column of the same variant, never another's. What was asked is shared: the first turn's prompt only
where every column was sent the same one (compare.blind.input_as_seen: a prompt of its own would name its variant),
then the follow-ups, which every column got alike.
"""

from __future__ import annotations

from compare.blind import input_as_seen
from compare.models import Output, Round
from compare.page_selectors import earlier_turns
from voting.conversation_counts import conversation_vote_of


def _turns_before(round_: Round) -> list[Round]:
    """The turns this one continues, first turn first."""
    chain: list[Round] = []
    parent = round_.parent
    while parent is not None:
        chain.append(parent)
        parent = parent.parent
    return chain[::-1]


def conversation_as_seen(round_: Round, outputs: list[Output], user) -> dict | None:
    """What a later turn's inbox item shows above its answers (None on a first turn); sets `earlier_answers` on
    each of `outputs` (the round's, as compare.blind shows them to `user`)."""
    for output in outputs:
        output.earlier_answers = [
            {"turn": earlier.turn, "answer": earlier.answer} for earlier in earlier_turns(output, round_.turn)
        ]
    if round_.turn < 2 or round_.parent_id is None:
        return None
    before = _turns_before(round_)
    first = before[0]
    asked = [{"turn": first.turn, "text": input_as_seen(first, list(first.outputs.all())).prompt}]
    asked += [{"turn": turn.turn, "text": turn.message} for turn in before[1:]]
    vote = conversation_vote_of(round_, user)
    picked = vote.variant_id if vote is not None else None
    return {
        "turn": round_.turn,
        "asked": asked,
        "message": round_.message,
        "voted": vote is not None,
        "vote_choice": vote.choice if vote is not None else None,
        "vote_output": next((o.pk for o in outputs if picked is not None and o.variant_id == picked), None),
    }
