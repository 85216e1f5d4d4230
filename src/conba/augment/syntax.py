"""tree-sitter helpers shared by the perturbations: parsing, leaves, error counts, statements, edits.

Parsers come from :func:`conba.syntax.languages.get_parser` (the same loader the indexer uses).
All positions are byte offsets into the UTF-8 encoded source.
"""

from __future__ import annotations

import random
import re
from collections.abc import Iterator
from typing import Any

from conba.syntax.languages import get_parser

_WORD = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*")


def parser_for(language: str) -> Any | None:
    """The tree-sitter parser of ``language`` or None (no grammar, or not installed)."""
    return get_parser(language)


def parse(code: str, language: str) -> tuple[Any, bytes] | None:
    """(tree, source bytes), or None when the language has no parser."""
    parser = parser_for(language)
    if parser is None:
        return None
    src = code.encode("utf-8")
    return parser.parse(src), src


def error_count(code: str, language: str) -> int | None:
    """Number of ERROR and MISSING nodes in the parse of ``code`` (None: no parser)."""
    parsed = parse(code, language)
    if parsed is None:
        return None
    return count_errors(parsed[0].root_node)


def count_errors(root: Any) -> int:
    n = 0
    stack = [root]
    while stack:
        node = stack.pop()
        if node.type == "ERROR" or node.is_missing:
            n += 1
        if node.has_error or node.is_missing:
            stack.extend(node.children)
    return n


def parses_cleanly(code: str, language: str) -> bool:
    """True when tree-sitter parses ``code`` without ERROR or MISSING nodes."""
    return error_count(code, language) == 0


def text(node: Any, src: bytes) -> str:
    return src[node.start_byte:node.end_byte].decode("utf-8", errors="replace")


def walk(root: Any) -> Iterator[Any]:
    """Every node, pre-order."""
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(node.children))


def field_of(node: Any) -> str | None:
    """The field name under which ``node`` hangs from its parent (None when it has none)."""
    parent = node.parent
    if parent is None:
        return None
    for i, child in enumerate(parent.children):
        if child.start_byte == node.start_byte and child.end_byte == node.end_byte and child.type == node.type:
            return parent.field_name_for_child(i)
    return None


def leaves(root: Any, atomic: frozenset[str] = frozenset()) -> list[Any]:
    """Leaf tokens in source order; nodes whose type is in ``atomic`` count as one token."""
    out = []
    for node in walk(root):
        if node.type in atomic or node.child_count == 0:
            if node.end_byte > node.start_byte and not _inside_atomic(node, atomic):
                out.append(node)
    return out


def _inside_atomic(node: Any, atomic: frozenset[str]) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.type in atomic:
            return True
        parent = parent.parent
    return False


def words(s: str) -> set[str]:
    """Identifier-like words of a string (used for raw macro bodies and collision checks)."""
    return set(_WORD.findall(s))


def apply_edits(src: bytes, edits: list[tuple[int, int, str]]) -> str:
    """Replace byte spans ``(start, end, new_text)`` (non-overlapping) and decode."""
    out, pos = [], 0
    for start, end, new in sorted(edits, key=lambda e: (e[0], e[1])):
        if start < pos:
            raise ValueError("overlapping edits")
        out.append(src[pos:start])
        out.append(new.encode("utf-8"))
        pos = end
    out.append(src[pos:])
    return b"".join(out).decode("utf-8", errors="replace")


def stochastic_round(x: float, rng: random.Random) -> int:
    """floor(x) plus 1 with probability frac(x): unbiased, so the expected count is exactly ``x``."""
    base = int(x)
    return base + (1 if rng.random() < x - base else 0)


def line_prefix(src: bytes, node: Any) -> bytes:
    """The bytes between the start of ``node``'s line and ``node``."""
    start = src.rfind(b"\n", 0, node.start_byte) + 1
    return src[start:node.start_byte]


def statements(root: Any, blocks: frozenset[str], skip: frozenset[str],
               skip_parent: frozenset[str] = frozenset()) -> list[list[Any]]:
    """The statement lists of every block (``blocks`` node types), in source order.

    Comments, nodes whose type is in ``skip`` (labels, case arms, preprocessor lines...) and blocks whose
    parent type is in ``skip_parent`` (e.g. a switch body) are left out.
    """
    out = []
    for node in walk(root):
        if node.type not in blocks or (node.parent is not None and node.parent.type in skip_parent):
            continue
        stmts = [c for c in node.named_children if "comment" not in c.type and c.type not in skip
                 and c.type != "ERROR" and not c.is_missing]
        if stmts:
            out.append(stmts)
    return out
