"""Reading YAML that came from outside (an import, an experiment file, a form, a model's answer): the one loader.

An alias (`*name`) repeats what its anchor (`&name`) holds without repeating the text, so nine aliases to nine
aliases … six levels deep turn a 700-byte file into half a million values: tens of megabytes once stored or
shown. The loader refuses every alias before a value is built, so what a document holds is never more than its
text: every size limit on the text (an upload's megabytes) then bounds the data as well. Merge keys (`<<: *base`)
are aliases too. Every YAML reader of the lab calls `load`; nothing else calls `yaml.safe_load`.
"""

from __future__ import annotations

from typing import Any

import yaml

# libyaml's parser (PyYAML's C binding, in its wheels) with PyYAML's safe constructor: the same values as
# `yaml.safe_load`, parsed several times faster — the pure-Python parser took most of a second on a file of 1,000
# dataset rows.
_BASE = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

ALIAS_REFUSED = "aliases (*name) are not accepted; write the value out in full"


class AliasError(yaml.constructor.ConstructorError):
    """A document uses an alias; a YAMLError, so every reader's handling of bad YAML (with the line) applies."""


class _AliasFound(Exception):
    pass


class _Loader(_BASE):
    def construct_document(self, node: yaml.Node) -> Any:
        if _has_alias(node):
            raise _AliasFound
        return super().construct_document(node)


def _has_alias(root: yaml.Node) -> bool:
    # The composer hands an alias back as its anchor's node object itself: a node met twice is an alias. Iterative,
    # so a deep document cannot exhaust the stack here; linear in the document's nodes.
    seen: set[int] = set()
    stack = [root]
    while stack:
        node = stack.pop()
        if id(node) in seen:
            return True
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            stack.extend(part for pair in node.value for part in pair)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
    return False


def _first_alias(text: str) -> yaml.Mark | None:
    """Where the first alias stands (the nodes only know their anchor's place); read again only on refusal."""
    return next(
        (event.start_mark for event in yaml.parse(text, Loader=_BASE) if isinstance(event, yaml.AliasEvent)), None
    )


def load(text: str) -> Any:
    """The one document in `text` as Python values (YAML's safe types only). Raises yaml.YAMLError on bad YAML,
    AliasError (one, marking the first alias) on an alias, RecursionError when nested beyond the parser's stack."""
    try:
        return yaml.load(text, Loader=_Loader)  # noqa: S506 — a safe constructor: _BASE is (C)SafeLoader
    except _AliasFound:
        raise AliasError(None, None, ALIAS_REFUSED, _first_alias(text)) from None
