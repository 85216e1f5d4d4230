"""Deletion perturbation: random tokens removed.

Tokens are the leaves of the tree-sitter parse (a string literal counts as one token; comments and
whitespace are not tokens), or, for languages without a grammar, ``\\w+`` runs and single punctuation
characters. Level ``p`` deletes ``p × (number of tokens)`` tokens (stochastically rounded). When a
deletion would glue two words together (``a+b`` -> ``ab``) a space is left in its place, so every
remaining token survives as it was. The result need not parse: that is the point of this noise.
"""

from __future__ import annotations

import random
import re
from typing import Any

from conba.augment.specs import ATOMIC
from conba.augment.syntax import leaves, stochastic_round

_TOKEN = re.compile(rb"\w+|[^\w\s]")


def token_spans(root: Any | None, src: bytes) -> list[tuple[int, int]]:
    """Byte spans of the tokens of ``src`` (from the parse tree ``root`` when given)."""
    if root is None:
        return [m.span() for m in _TOKEN.finditer(src)]
    return [(leaf.start_byte, leaf.end_byte) for leaf in leaves(root, ATOMIC)
            if "comment" not in leaf.type and src[leaf.start_byte:leaf.end_byte].strip()]


def _wordy(b: bytes) -> bool:
    return bool(b) and (b.isalnum() or b == b"_" or b[0] >= 0x80)


def delete(root: Any | None, src: bytes, level: float, rng: random.Random) -> tuple[str, int, int]:
    """Returns (new code, tokens deleted, tokens in the snippet)."""
    spans = token_spans(root, src)
    k = min(stochastic_round(level * len(spans), rng), len(spans))
    if k == 0:
        return src.decode("utf-8", errors="replace"), 0, len(spans)
    gone = set(rng.sample(range(len(spans)), k))
    out = bytearray()
    pos = 0
    pending_gap = False
    for i, (start, end) in enumerate(spans):
        gap = src[pos:start]
        if i in gone:
            out += gap
            pending_gap = True
        else:
            piece = gap + src[start:end]
            if pending_gap and not gap and out and _wordy(bytes(out[-1:])) and _wordy(piece[:1]):
                out += b" "
            out += piece
            pending_gap = False
        pos = end
    out += src[pos:]
    return out.decode("utf-8", errors="replace"), k, len(spans)
