"""What counts as "the same prompt" on the leaderboard: its text, normalised, within one workspace."""

import hashlib
import unicodedata


def normalise_prompt(text: str) -> str:
    """The text with Unicode in NFC form, line endings unified, each line's trailing spaces dropped and leading and
    trailing blank lines removed: edits a reader cannot see do not split a prompt's ratings."""
    lines = unicodedata.normalize("NFC", text).replace("\r\n", "\n").replace("\r", "\n").split("\n")
    return "\n".join(line.rstrip() for line in lines).strip("\n")


def prompt_identity(system_prompt: str, prompt: str) -> str:
    """A stable key for a prompt version: SHA-256 of the normalised system prompt and prompt together."""
    joined = normalise_prompt(system_prompt) + "\x00" + normalise_prompt(prompt)
    return hashlib.sha256(joined.encode()).hexdigest()
