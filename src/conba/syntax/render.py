"""Cutting nodes out of a source and tidying the result like the training data's processing.

Removal spans take along a Rust ``#[attribute]`` above the node, a comment that trails it on its
last line, and (for dropped definitions) the comments directly above it on their own lines; a span
never takes the line break after it. After the cut, lines that the removal emptied are deleted,
trailing whitespace is stripped, runs of 3+ blank lines become 2, leading and trailing blank lines go,
and the text ends with one newline (the data README, ../shared/data/README.md "Processing"). Where a removal sat
between blank lines, the two runs merge into one, and a removal just before a closing brace or
``end`` takes the blank lines above it along.
"""

from __future__ import annotations

import re
from typing import Any

_CLOSER = re.compile(r"\s*(?:[}\])]|end\b)")
_MARK = "\x00"  # stands where text was cut, so emptied lines can be told from blank ones
Span = tuple[int, int, bytes]  # start byte, end byte, replacement


def removal_span(node: Any, src: bytes, comments: frozenset[str], leading_comments: bool = False,
                 replacement: bytes = b"") -> Span:
    start, end = node.start_byte, node.end_byte
    prev = node.prev_named_sibling
    while prev is not None and (prev.type == "attribute_item" or (
            leading_comments and prev.type in comments and _own_line(prev, src)
            and src.count(b"\n", prev.end_byte - 1, start) <= 1)):
        start = prev.start_byte
        prev = prev.prev_named_sibling
    nxt = node.next_named_sibling
    if (nxt is not None and nxt.type in comments and src[end - 1:end] != b"\n"
            and b"\n" not in src[end:nxt.start_byte]):
        end = nxt.end_byte
    while end > start and src[end - 1:end] == b"\n":
        end -= 1
    return start, end, replacement


def _own_line(node: Any, src: bytes) -> bool:
    line_start = src.rfind(b"\n", 0, node.start_byte) + 1
    return not src[line_start:node.start_byte].strip()


def cut(src: bytes, spans: list[Span]) -> str:
    """``src`` without the spans (nested and overlapping ones merge), then tidied."""
    pieces: list[bytes] = []
    pos = 0
    for start, end, replacement in sorted(spans, key=lambda s: (s[0], -s[1])):
        if start < pos:  # inside a span already cut
            pos = max(pos, end)
            continue
        pieces.append(src[pos:start])
        pieces.append(_MARK.encode() + replacement)
        pos = end
    pieces.append(src[pos:])
    return tidy(b"".join(pieces).decode("utf-8", errors="replace"))


def tidy(text: str) -> str:
    lines: list[str] = []
    run = 0          # blank lines at the end of ``lines``
    after_cut = -1   # blank lines since the last line a removal emptied (-1: no cut pending)
    for line in text.split("\n"):
        if _MARK in line:
            line = line.replace(_MARK, "")
            if not line.strip():  # emptied by a removal
                after_cut = 0
                continue
        line = line.rstrip()
        if not line:
            if after_cut >= 0:
                after_cut += 1
                if after_cut <= run:  # the blank lines before the cut already separate
                    continue
            if run >= 2 or not lines:
                continue
            lines.append("")
            run += 1
            continue
        if after_cut >= 0 and _CLOSER.match(line):  # no blank line left before a closing brace / end
            while lines and not lines[-1]:
                lines.pop()
        lines.append(line)
        run, after_cut = 0, -1
    while lines and not lines[-1]:
        lines.pop()
    return "\n".join(lines) + "\n" if lines else ""
