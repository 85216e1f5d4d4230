"""Insertion perturbation: dead statements inserted between statements, in the snippet's language.

Statements are the direct children of blocks (function bodies, loop bodies, Python modules...), not
switch arms, labels or preprocessor lines. A dead statement (an unused fresh variable, or a guarded
``if (false) {...}``) goes right before a randomly chosen statement, indented like it; in Python,
Ruby and Kotlin only before statements that start their line. Level ``p`` inserts ``p × (number of
statements)`` dead statements (stochastically rounded), at distinct positions, as many as there are
positions. Inserting before (never after) a statement keeps it reachable.
"""

from __future__ import annotations

import random
from typing import Any

from conba.augment.names import fresh_name
from conba.augment.specs import LangSpec
from conba.augment.syntax import apply_edits, line_prefix, statements, stochastic_round, words

_PREFER = ("unused", "dummy", "spare", "scratch", "pad", "junk", "temp2", "extra")


def all_statements(root: Any, spec: LangSpec) -> list[list[Any]]:
    return statements(root, spec.blocks, spec.skip_stmts, spec.skip_block_parents)


def insert(root: Any, src: bytes, spec: LangSpec, level: float, rng: random.Random) -> tuple[str, int, int]:
    """Returns (new code, statements inserted, statements in the snippet)."""
    stmts = [s for block in all_statements(root, spec) for s in block]
    positions = []
    for s in stmts:
        prefix = line_prefix(src, s)
        at_line_start = not prefix.strip()
        if spec.line_start_only and not at_line_start:
            continue
        positions.append((s, prefix.decode("utf-8", errors="replace") if at_line_start else None))
    k = min(stochastic_round(level * len(stmts), rng), len(positions))
    if k == 0 or not spec.dead:
        return src.decode("utf-8", errors="replace"), 0, len(stmts)
    taken = words(src.decode("utf-8", errors="replace"))
    edits = []
    for s, indent in rng.sample(positions, k):
        template = rng.choice(spec.dead)
        unit = "\t" if indent and indent.startswith("\t") else "    "
        body = template.format(v=fresh_name("tmp", taken, rng, prefer=_PREFER), n=rng.randint(0, 9),
                               ind=(indent or "") + unit)
        edits.append((s.start_byte, s.start_byte, body + ("\n" + indent if indent is not None else " ")))
    return apply_edits(src, edits), k, len(stmts)
