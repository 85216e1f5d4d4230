"""Recovering the functions of a C or C++ file that tree-sitter could not parse whole.

The preprocessor is the usual cause: an ``#ifdef`` that splits an expression in two (zlib's
``inflate``), a macro tree-sitter cannot read; its error recovery may then swallow the rest of the
file into one node, and every function after the error would be silently lost. Two repairs:

* :func:`chunk_ranges`: the file cut at its top-level closing braces (a ``}`` alone at the start of a
  line, as C and C++ close a top-level function, struct or namespace), each piece parsed on its own
  (with tree-sitter's included ranges, so offsets and lines stay the file's): a function after the
  error parses as if the error were not there.
* :class:`JoinedDefinition`: a K&R definition with a pointer return type (``const char *zError(err)
  int err; { ... }``), which tree-sitter-c reads as a declaration followed by a block, joined back
  into one function.
"""

from __future__ import annotations

import re
from typing import Any

_TOP_LEVEL_CLOSE = re.compile(rb"^\}[ \t]*;?[ \t]*(?://[^\n]*|/\*[^\n]*\*/[ \t]*)?$", re.M)


def chunk_ranges(src: bytes) -> list[Any]:
    """tree-sitter ``Range`` s of the pieces of ``src`` between top-level closing braces."""
    from tree_sitter import Range

    ends = [m.end() for m in _TOP_LEVEL_CLOSE.finditer(src)]
    ranges, start = [], 0
    for end in [*ends, len(src)]:
        if end > start and src[start:end].strip():
            ranges.append(Range(_point(src, start), _point(src, end), start, end))
        start = end
    return ranges


def _point(src: bytes, offset: int) -> tuple[int, int]:
    row = src.count(b"\n", 0, offset)
    return row, offset - (src.rfind(b"\n", 0, offset) + 1)


def parse_range(language: Any, src: bytes, piece: Any) -> Any:
    """The tree of one piece of ``src`` (a fresh parser: the shared one keeps its ranges)."""
    from tree_sitter import Parser

    return Parser(language, included_ranges=[piece]).parse(src)


def split_body(node: Any) -> Any | None:
    """The block after ``node`` when ``node`` is a declaration of a function (through pointers) that
    tree-sitter separated from its body (K&R with a pointer return type); else None."""
    if node.type != "declaration":
        return None
    body = node.next_named_sibling
    while body is not None and (body.type == "declaration" or body.type == "comment"):  # K&R parameter types
        body = body.next_named_sibling
    if body is None or body.type != "compound_statement":
        return None
    decl = node.child_by_field_name("declarator")
    while decl is not None and decl.type in ("pointer_declarator", "parenthesized_declarator"):
        decl = decl.child_by_field_name("declarator")
    return body if decl is not None and decl.type == "function_declarator" else None


class JoinedDefinition:
    """A function definition made of a declaration node and the block node after it (duck-typed as a
    tree-sitter node for the extractor: span, fields, siblings)."""

    type = "function_definition"

    def __init__(self, declaration: Any, body: Any):
        self.declaration, self.body = declaration, body
        self.start_byte, self.start_point = declaration.start_byte, declaration.start_point
        self.end_byte, self.end_point = body.end_byte, body.end_point
        self.prev_sibling, self.parent = declaration.prev_sibling, declaration.parent
        self.named_children = [*declaration.named_children, body]  # (the K&R declarations between: unused)

    def child_by_field_name(self, name: str) -> Any:
        return self.body if name == "body" else self.declaration.child_by_field_name(name)
