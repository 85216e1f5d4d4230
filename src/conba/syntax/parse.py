"""Parsing a snippet for the input view: grammar choice, error share, cached tree-sitter queries."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any

from conba.syntax.languages import TABLE, get_parser
from conba.syntax.rules import RULES, Rules

MAX_ERROR_SHARE = 0.5  # a tree whose ERROR nodes cover more of the text than this is not used


@dataclass
class Parsed:
    """A parsed snippet: grammar key, its rules, the UTF-8 source and the tree's root node."""

    key: str
    rules: Rules
    src: bytes
    root: Any
    language: Any  # the tree_sitter.Language (for queries)

    _scanned: dict[str, list[Any]] | None = None

    @property
    def family(self) -> str:
        """Whose special cases apply (:attr:`Rules.family`): ``tsx`` is ``typescript``, ``php-only`` is ``php``."""
        return self.rules.family

    def nodes(self, name: str) -> list[Any]:
        """The nodes of one kind, in source order: ``comment``, ``import`` (candidate directives, see
        :mod:`conba.syntax.imports`) or ``docstring`` (Python bare string statements). One query
        pass over the tree finds all three."""
        if self._scanned is None:
            from tree_sitter import QueryCursor

            query = _query(self.language, _scan_source(self.key, self.language))
            self._scanned = QueryCursor(query).captures(self.root)
            for group in self._scanned.values():
                group.sort(key=lambda n: (n.start_byte, -n.end_byte))
        return self._scanned.get(name, [])


def grammar_for(language: str, code: str) -> str | None:
    """The grammar key for a conba language name, or None when the view has no grammar for it.
    Code without the entry's opening tag is parsed with its tag-less grammar (PHP: snippets rarely
    carry ``<?php``)."""
    entry = TABLE.get(language)
    if entry is not None and entry.open_tag and entry.tagless_grammar and entry.open_tag not in code:
        return entry.tagless_grammar
    return language if language in RULES else None


def parse(code: str, language: str) -> Parsed | str:
    """The parsed snippet, or the reason it cannot be viewed: ``language`` (no grammar, or its
    package is not installed) or ``parse_error`` (no usable tree)."""
    key = grammar_for(language, code)
    parser = get_parser(key) if key else None
    if parser is None:
        return "language"
    src = code.encode("utf-8")
    try:
        root = parser.parse(src).root_node
    except (ValueError, RuntimeError):
        return "parse_error"
    language = parser.language
    retry = TABLE[key].retry_grammar if key in TABLE else None
    if root.has_error and retry:  # e.g. JSX inside a .ts snippet: try the TSX grammar
        other = get_parser(retry)
        if other is not None:
            alt = other.parse(src).root_node
            if error_share(alt, len(src), other.language) < error_share(root, len(src), language):
                key, root, language = retry, alt, other.language
    if root.type == "ERROR" or (root.has_error and error_share(root, len(src), language) > MAX_ERROR_SHARE):
        return "parse_error"
    assert key is not None and language is not None  # a parser was found for it above
    return Parsed(key, RULES[key], src, root, language)


def error_share(root: Any, size: int, language: Any) -> float:
    """Share of the source bytes inside ERROR nodes (outermost ones only)."""
    if not root.has_error or size == 0:
        return 0.0
    covered, end = 0, -1
    for node in captures(root, "(ERROR) @e", language):
        if node.start_byte >= end:
            covered += node.end_byte - node.start_byte
            end = node.end_byte
        elif node.end_byte > end:
            covered += node.end_byte - end
            end = node.end_byte
    return covered / size


@functools.cache
def _query(language: Any, source: str) -> Any:
    from tree_sitter import Query

    return Query(language, source)


def captures(node: Any, source: str, language: Any) -> list[Any]:
    """Every node any pattern of the query ``source`` captures inside ``node``, in source order
    (outer nodes before the nodes they contain)."""
    from tree_sitter import QueryCursor

    found = QueryCursor(_query(language, source)).captures(node)
    nodes = [n for group in found.values() for n in group]
    nodes.sort(key=lambda n: (n.start_byte, -n.end_byte))
    return nodes


@functools.cache
def _scan_source(key: str, language: Any) -> str:
    """The query behind :meth:`Parsed.nodes` (node types the grammar does not know are left out, so
    one rule table can serve several grammar versions)."""
    rules = RULES[key]
    parts = [f"({t}) @{name}" for name, types in (("comment", rules.comments), ("import", rules.imports))
             for t in sorted(types) if _knows(language, t)]
    if rules.family == "python":
        parts.append("((expression_statement . [(string) (concatenated_string)] .) @docstring)")
    return " ".join(parts)


@functools.cache
def _knows(language: Any, node_type: str) -> bool:
    return language.id_for_node_kind(node_type, True) is not None
