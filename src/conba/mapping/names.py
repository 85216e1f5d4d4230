"""Name anchors: ports keep the names of what they port, so a source and a target function with the same name
key, each the only one with it on its side, are most likely counterparts.

A function's keys (:func:`folded_keys`): its name lower case without ``_`` or punctuation (``diff_main`` =
``diffMain``), the receiver type's name before or after its name (C ``ZopfliCostModelSetFromCommands`` =
Rust ``ZopfliCostModel.set_from_commands``, C ``InitCommand`` = Rust ``Command.init``), and its name
without a leading namespace of one or two words (``BrotliStoreMetaBlock`` = ``store_meta_block``) when two
words and 8 letters are left. Generic names
(constructors, ``toString``, ``equals``, Rust ``new`` / ``default`` ...) anchor only with their receiver
(``Command.init`` = ``InitCommand``); keys shorter than 4 letters anchor nothing.

:func:`name_anchors` gives the anchored (row, column) pairs: a key that exactly one source function (or one
overload set) and exactly one target function (or one overload set) answer to. ``conba map`` raises an
anchored pair's score by ``name_bonus`` for the assignment when its own score is at least ``threshold -
name_bonus`` (the body must still be plausible; the reported score stays the pair's own). ``--name-bonus 0``
turns it off (name-blind but for the names inside the code, which the scores see anyway).
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from conba.source.records import Unit
from conba.text import split_words

GENERIC = frozenset({"init", "constructor", "tostring", "str", "repr", "equals", "eq", "hashcode", "hash",
                     "compareto", "new", "default", "drop", "clone", "fmt", "valueof", "dispose", "gethashcode"})
MIN_FOLDED = 8   # letters a prefix-dropped key keeps
MIN_KEY = 4      # letters an anchoring key has


def name_parts(qualname: str) -> list[str]:
    """The components of a qualified name, generic arguments dropped (``Foo<T>.bar`` -> ``Foo``, ``bar``)."""
    return [p for p in re.split(r"[.:#]", re.sub(r"(?<=\w)<[^<>]*>", "", qualname)) if p]


def _key(words: list[str]) -> str:
    return re.sub(r"[\W_]", "", "".join(words)).lower()


def folded_keys(qualname: str) -> set[str]:
    """The keys a function answers to (see the module docstring), its plain name key included."""
    parts = name_parts(qualname)
    if not parts:
        return set()
    words = split_words(parts[-1])
    keys = {_key(words)}
    if len(parts) >= 2:  # the receiver before or after the name: Foo.set_bar = FooSetBar, Foo.init = InitFoo
        keys.add(_key(split_words(parts[-2]) + words))
        keys.add(_key(words + split_words(parts[-2])))
    for drop in (1, 2):
        rest = _key(words[drop:])
        if len(words) - drop >= 2 and len(rest) >= MIN_FOLDED:
            keys.add(rest)
    return keys - {""}


def _anchor_keys(units: Sequence[Unit], sets: np.ndarray | None) -> dict[str, int]:
    """key -> the one overload set (or unit index) answering to it; keys several answer to are left out."""
    owners: dict[str, set[int]] = defaultdict(set)
    for i, u in enumerate(units):
        if u.kind != "function":
            continue
        for k in folded_keys(u.qualname):  # a generic name anchors through its receiver only (Command.init)
            if len(k) >= MIN_KEY and k not in GENERIC:
                owners[k].add(int(sets[i]) if sets is not None else i)
    return {k: next(iter(v)) for k, v in owners.items() if len(v) == 1}


def name_anchors(source: Sequence[Unit], target: Sequence[Unit], source_sets: np.ndarray | None = None,
                 target_sets: np.ndarray | None = None) -> list[tuple[int, int]]:
    """(row, column) pairs of source and target functions anchored by a shared unique key (rows and columns
    index ``source`` and ``target``; ``*_sets``: int (n,) / (m,) overload set ids, None: each its own)."""
    src, tgt = _anchor_keys(source, source_sets), _anchor_keys(target, target_sets)
    by_set_s: dict[int, list[int]] = defaultdict(list)
    by_set_t: dict[int, list[int]] = defaultdict(list)
    for i in range(len(source)):
        by_set_s[int(source_sets[i]) if source_sets is not None else i].append(i)
    for j in range(len(target)):
        by_set_t[int(target_sets[j]) if target_sets is not None else j].append(j)
    pairs = {(i, j) for k in src.keys() & tgt.keys() for i in by_set_s[src[k]] for j in by_set_t[tgt[k]]}
    return sorted(pairs)


def anchor_scores(scores: np.ndarray, anchors: Sequence[tuple[int, int]], threshold: float,
                  bonus: float) -> tuple[np.ndarray, np.ndarray]:
    """(scores for the assignment, bool (n, m) anchored-and-raised): ``scores`` (float (n, m)) with ``bonus``
    added to the anchored pairs scoring at least ``threshold - bonus``."""
    raised = np.zeros(scores.shape, dtype=bool)
    if not anchors or bonus <= 0:
        return scores, raised
    rows, cols = np.array([a[0] for a in anchors]), np.array([a[1] for a in anchors])
    ok = scores[rows, cols] >= threshold - bonus
    raised[rows[ok], cols[ok]] = True
    return np.where(raised, scores + bonus, scores).astype(scores.dtype), raised
