"""Comments, docstrings and license headers of a parsed snippet.

* Comments: every comment node of the grammar (line, block, doc comments; Ruby ``=begin``).
* Docstrings (Python): every bare string statement, as the training data's processing removed them
  (the data README, ../shared/data/README.md "Processing": docstrings and string "block comments").
* License header: the paragraphs (runs of comments without a blank line between them) of the
  leading comments, plus a Python module docstring, that mention a copyright or license.
"""

from __future__ import annotations

import re
from typing import Any

from conba.syntax.parse import Parsed

_LICENSE = re.compile(
    rb"copyright|\xc2\xa9|\(c\)\s*(19|20)\d\d|spdx-license|licen[cs]e|all rights reserved"
    rb"|permission is hereby granted|redistribution and use|gnu (lesser )?general public",
    re.IGNORECASE)
_PY_STRINGS = frozenset({"string", "concatenated_string"})
_HEADER_SKIP = frozenset({"php_tag", "text"})  # PHP: the opening tag (and inline HTML) before the header


def comment_nodes(parsed: Parsed) -> list[Any]:
    return parsed.nodes("comment")


def docstring_nodes(parsed: Parsed) -> list[Any]:
    """Python bare string statements (docstrings, string "block comments"); other languages: none."""
    return parsed.nodes("docstring")


def is_docstring(node: Any) -> bool:
    inner = node.named_children
    return node.type == "expression_statement" and len(inner) == 1 and inner[0].type in _PY_STRINGS


def license_nodes(parsed: Parsed) -> list[Any]:
    """The leading comment paragraphs (and Python module docstring) that are a license header."""
    src, comments = parsed.src, parsed.rules.comments
    header: list[Any] = []
    for node in parsed.root.named_children:
        if node.type in comments:
            header.append(node)
        elif parsed.family == "python" and is_docstring(node):
            header.append(node)
        elif node.type not in _HEADER_SKIP or header:
            break
    out: list[Any] = []
    for paragraph in _paragraphs(header, src):
        if any(_LICENSE.search(src, n.start_byte, n.end_byte) for n in paragraph):
            out.extend(paragraph)
    return out


def _paragraphs(nodes: list[Any], src: bytes) -> list[list[Any]]:
    """Split consecutive nodes where a blank line separates them (a docstring stands alone)."""
    out: list[list[Any]] = []
    for node in nodes:  # a docstring is a paragraph of its own
        if (out and src.count(b"\n", out[-1][-1].end_byte - 1, node.start_byte) <= 1
                and not is_docstring(node) and not is_docstring(out[-1][-1])):
            out[-1].append(node)
        else:
            out.append([node])
    return out
