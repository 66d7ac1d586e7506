"""Prompt identity for the leaderboard: invisible edits keep one identity, visible ones make a new one."""

import hashlib

from voting.prompt_identity import normalise_prompt, prompt_identity


def test_invisible_differences_do_not_split_a_prompt():
    # "é" typed as one code point and as e + combining accent; Windows line endings; trailing spaces.
    assert normalise_prompt("Caf\u00e9  \r\nSay hi.\r\n\r\n") == normalise_prompt("\nCafe\u0301\nSay hi.")
    assert prompt_identity("Be brief. ", "Hi {{name}}") == prompt_identity("Be brief.", "Hi {{name}}\n")


def test_visible_differences_make_a_new_prompt_version():
    assert prompt_identity("", "Hi {{name}}") != prompt_identity("", "Hello {{name}}")
    # Indentation and inner blank lines can change what a model does, so they count.
    assert normalise_prompt("a\n\nb") != normalise_prompt("a\nb")
    assert normalise_prompt("  a") == "  a"
    # The system prompt and the prompt are kept apart: moving text between them is a different version.
    assert prompt_identity("ab", "c") != prompt_identity("a", "bc")


def test_identity_is_the_sha256_of_the_normalised_texts():
    expected = hashlib.sha256(b"Be brief.\x00Hi").hexdigest()
    assert prompt_identity("Be brief.  ", "Hi\r\n") == expected
