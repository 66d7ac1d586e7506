"""Blind mode, written once: what one person may see of a round before they have voted on it.

A blind round's answers are created in a random order (so ids say nothing), shown to each person in their own
shuffle under "Answer A", "Answer B" … with only their text and status: the variant, model, prompts, cost, timings,
token counts and error are blank, and its tally is a total only. What the round was asked shows only where every
answer was asked the same (`input_as_seen`). Names come back once any reveal check voting registers in
compare/hooks.py ("has this person voted here?") says so, or for everyone once the comparison is revealed (its owner
revealed it, or everyone who votes has voted: `comparison_revealed`); only then do the prompt library and "save
rounds as dataset rows" open to a blind comparison. Pushes on the comparison's channel reach everyone, so they
carry none of the hidden figures while it is blind (`for_channel`). Every page, endpoint and push asks this
module; none decides for itself (docs/fairness.md).
"""

from __future__ import annotations

import random
import secrets
from dataclasses import dataclass

from django.core.exceptions import ValidationError

from lab.access import membership_for_user
from lab.roles import Role

from .hooks import reveal_allowed, voting_over
from .models import CompareGroup, Mode, Output, Round, Variant, is_placeholder_label

# Everything an answer carries besides its text, status and finish reason, blank until the reader may see names:
# cost, timings and token counts tell models apart as surely as names do, and an error names the connection.
HIDDEN_FIGURES = (
    "queued_ms",
    "ttft_ms",
    "latency_ms",
    "input_tokens",
    "output_tokens",
    "tokens_estimated",
    "cost",
    "cached",
    "error",
    "started_at",
    "finished_at",
)
# A push's fields that name what is hidden: the figures, and the connection a call waits for.
HIDDEN_ON_CHANNEL = (*HIDDEN_FIGURES, "connection")


def blind_now(group: CompareGroup) -> bool:
    """A blind comparison its owner has not revealed: what a push on its channel may carry (pushes reach everyone,
    voted or not; a page whose reader may see more reloads over HTTP)."""
    return group.blind and group.revealed_at is None


def comparison_revealed(group: CompareGroup) -> bool:
    """Whether everyone may see which answer was whose in every round voted on so far: always for an open
    comparison; for a blind one once its owner revealed it or everyone who votes has voted. Then the prompt
    library and "save rounds as dataset rows" open to it."""
    return not blind_now(group) or voting_over(group)


def require_revealed(group: CompareGroup, field: str) -> None:
    """Refuse (a 400 on `field`) what would tell which prompt or answer was whose in a blind comparison not yet
    revealed: saving its prompts to the library, or its rounds (with their winners) as dataset rows."""
    if not comparison_revealed(group):
        raise ValidationError(
            {
                field: f"“{group.title}” is blind: this opens once everyone has voted on every round or its owner "
                "reveals it."
            }
        )


def may_reveal(group: CompareGroup, user) -> bool:
    """Whether this person may end the comparison's blind voting for everyone now: it is blind and not revealed,
    and they made it or own its workspace."""
    if not blind_now(group) or not getattr(user, "is_authenticated", False):
        return False
    return group.created_by_id == user.pk or membership_for_user(user, group.workspace_id).allows(Role.OWNER)


def labels_visible(round_: Round, user, *, blind: bool = False) -> bool:
    """In blind mode labels stay hidden until the user has voted (until voting exists, they stay hidden) or the
    comparison's owner revealed it. Blind mode is the comparison's setting, or a page's own (`blind`: the voting
    inbox is blind by default)."""
    group = round_.group
    if not (group.blind or blind):
        return True
    if group.revealed_at is not None and not blind:
        return True
    return reveal_allowed(round_, user)


def for_channel(payload: dict, *, blind: bool) -> dict:
    """A push about one answer (`output.done`, `output.waiting`) as the comparison's channel may carry it: with
    every hidden field null while the comparison is blind (`blind`: `blind_now` of its comparison)."""
    if not blind:
        return payload
    return {key: None if key in HIDDEN_ON_CHANNEL else value for key, value in payload.items()}


@dataclass(frozen=True)
class Seen:
    """One answer's names as one person may see them: None where blind mode hides them."""

    label: str  # what to show it under: its variant's label, or "Answer A" … while blind
    variant: int | None
    position: int | None
    model: str | None
    rendered_system_prompt: str | None
    rendered_prompt: str | None
    figures: bool = True  # cost, timings, tokens and error are shown (on the output itself, blank when False)
    by_model: bool = False  # a models comparison with names shown: its columns are told apart by model
    messages: list | None = None  # the list sent, hidden like rendered_prompt (it holds the variant's own words)

    @property
    def variant_label(self) -> str | None:
        """The variant's own label, None while blind mode hides it."""
        return self.label if self.figures else None

    @property
    def heading(self) -> str:
        """What the answer's column is headed with: its model in a models comparison (after its label when
        someone gave one rather than the handed-out letter), else its label ("Answer A" … while blind)."""
        if not self.by_model:
            return self.label
        return self.model if is_placeholder_label(self.label) else f"{self.label} · {self.model}"


def outputs_as_seen_by(round_: Round, user, *, blind: bool = False) -> tuple[list[Output], bool]:
    """The round's outputs (in variant position order, variants loaded) in the order this user may see them, each
    with `seen` set, and whether labels are shown. Hidden labels come with a per-user shuffle, so column order
    gives nothing away either; `blind` as in labels_visible."""
    outputs = list(round_.outputs.all())
    if labels_visible(round_, user, blind=blind):
        by_model = round_.group.mode == Mode.MODELS
        for output in outputs:
            variant = output.variant
            output.seen = Seen(
                variant.label,
                variant.pk,
                variant.position,
                variant.model,
                output.rendered_system_prompt,
                output.rendered_prompt,
                by_model=by_model,
                messages=output.messages,
            )
        return outputs, True
    outputs = blind_order(round_.conversation_id, getattr(user, "pk", 0), outputs)
    for index, output in enumerate(outputs):
        output.seen = Seen(f"Answer {chr(ord('A') + index % 26)}", None, None, None, None, None, figures=False)
        # Blanked on the loaded row itself (never saved), so no page, serializer or partial can show them.
        for name in HIDDEN_FIGURES:
            setattr(output, name, None)
    return outputs, False


def blind_order(conversation_id: int, user_id: int, outputs: list) -> list:
    """Blind mode's per-user shuffle of a round's outputs (given in variant position order): the columns as this
    user sees them before voting. Voter quality reads it back to know which column a blind pick was in.

    It is keyed by the conversation (`Round.conversation_id`: its first round's id, a lone round's own), and every
    turn has one output per variant, so a column keeps its letter and its place in every turn of a conversation,
    for each voter: "Answer B" stays the same model all through (docs/conversations.md)."""
    shuffled = list(outputs)
    random.Random(f"{conversation_id}:{user_id}").shuffle(shuffled)
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
    return tally_as_seen(tally, labels_visible=not blind_now(round_.group))
