"""Blind mode, written once: what one person may see of a round before they have voted on it.

A blind round's answers are created in a random order (so ids say nothing), shown to each person in their own
shuffle under "Answer A", "Answer B" … with the variant, model and prompts blank, and its tally as a total only.
What the round was asked shows only where every answer was asked the same (`input_as_seen`).
Names come back once any registered reveal check (voting's "has this person voted here?") says so. Every page,
endpoint and push asks this module; none decides for itself.
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Callable
from dataclasses import dataclass

from .models import CompareGroup, Output, Round, Variant

# Apps further up (voting) register "has this user voted in this round?" here; compare cannot import them.
RevealCheck = Callable[[Round, object], bool]
_reveal_checks: list[RevealCheck] = []


def register_reveal_check(check: RevealCheck) -> None:
    """Blind mode shows labels and models once any registered check says the user may see them."""
    if check not in _reveal_checks:
        _reveal_checks.append(check)


def labels_visible(round_: Round, user, *, blind: bool = False) -> bool:
    """In blind mode labels stay hidden until the user has voted (until voting exists, they stay hidden). Blind
    mode is the comparison's setting, or a page's own (`blind`: the voting inbox is blind by default)."""
    return not (round_.group.blind or blind) or any(check(round_, user) for check in _reveal_checks)


@dataclass(frozen=True)
class Seen:
    """One answer's names as one person may see them: None where blind mode hides them."""

    label: str
    variant: int | None
    position: int | None
    model: str | None
    rendered_system_prompt: str | None
    rendered_prompt: str | None


def outputs_as_seen_by(round_: Round, user, *, blind: bool = False) -> tuple[list[Output], bool]:
    """The round's outputs (in variant position order, variants loaded) in the order this user may see them, each
    with `seen` set, and whether labels are shown. Hidden labels come with a per-user shuffle, so column order
    gives nothing away either; `blind` as in labels_visible."""
    outputs = list(round_.outputs.all())
    if labels_visible(round_, user, blind=blind):
        for output in outputs:
            variant = output.variant
            output.seen = Seen(
                variant.label,
                variant.pk,
                variant.position,
                variant.model,
                output.rendered_system_prompt,
                output.rendered_prompt,
            )
        return outputs, True
    outputs = blind_order(round_.pk, getattr(user, "pk", 0), outputs)
    for index, output in enumerate(outputs):
        output.seen = Seen(f"Answer {chr(ord('A') + index % 26)}", None, None, None, None, None)
    return outputs, False


def blind_order(round_id: int, user_id: int, outputs: list) -> list:
    """Blind mode's per-user shuffle of a round's outputs (given in variant position order): the columns as this
    user sees them before voting. Voter quality reads it back to know which column a blind pick was in."""
    shuffled = list(outputs)
    random.Random(f"{round_id}:{user_id}").shuffle(shuffled)
    return shuffled


@dataclass(frozen=True)
class InputSeen:
    """What a round's answers were asked, as one person may see it before voting: the round's variables, and the
    system prompt and prompt where every answer got the same (None where they differ). `own_prompts`: the answers
    were asked in words of their own, shown per answer (`Seen`) only once names are."""

    variables: dict
    system_prompt: str | None
    prompt: str | None
    own_prompts: bool


def input_as_seen(round_: Round, outputs: list[Output]) -> InputSeen:
    """A text every answer was sent alike says nothing about which is which, so it shows even in a blind round;
    a text that differs would (a prompt version names its variant) and shows only with the names, per answer."""
    system_prompts = {output.rendered_system_prompt for output in outputs}
    prompts = {output.rendered_prompt for output in outputs}
    return InputSeen(
        variables=round_.variables,
        system_prompt=next(iter(system_prompts)) if len(system_prompts) == 1 else None,
        prompt=next(iter(prompts)) if len(prompts) == 1 else None,
        own_prompts=len(system_prompts) > 1 or len(prompts) > 1,
    )


def creation_order(group: CompareGroup, variants: list[Variant]) -> list[Variant]:
    """Blind rounds create their answers in a random order, so output ids say nothing about which variant is which."""
    if not group.blind:
        return variants
    return secrets.SystemRandom().sample(variants, len(variants))


def tally_as_seen(tally: dict, *, labels_visible: bool) -> dict:
    """A round's tally as someone who may not see names yet gets it: the total only, since per-answer counts would
    show where the others' votes went."""
    return tally if labels_visible else {"total": tally["total"]}


def tally_for_channel(round_: Round, tally: dict) -> dict:
    """The tally pushed on the comparison's channel: everyone there gets it, voted or not, so a blind comparison's
    push carries the total only. A page whose viewer has voted reloads its panel over HTTP for the counts."""
    return tally_as_seen(tally, labels_visible=not round_.group.blind)
