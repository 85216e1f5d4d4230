"""Constructors: which functions build an object, and the rule that a constructor ports only to a constructor.

A function is a **constructor** (:func:`constructor_mask`) when its name says so: ``<init>`` (the extractor's
name for Java, C#, C++ ... constructors), Python ``__init__`` / ``__new__``, JavaScript / TypeScript
``constructor``, Ruby ``initialize``, PHP ``__construct``, Swift ``init``; or, in JavaScript / TypeScript,
a constructor function: a capitalised name (``Parser``, ``diff_match_patch.Diff``) or a function that is
the receiver of another function of its file defined outside its own lines (``diff_match_patch`` with its
prototype methods ``diff_match_patch.diff_main``; a helper nested inside a function lies within its lines and
does not count).

In two languages that both have constructors (:data:`CLASS_LANGUAGES`), a constructor and a function that is
not one are not counterparts (:func:`kind_mismatch`): ``conba map`` never assigns such a pair, so C++
``Patch::isNull`` (which tests the fields a constructor sets) is not the port of the JavaScript constructor
``patch_obj``. Languages without constructors (C, Rust, Go) build objects with plain functions (Rust
``new``, C ``InitCommand``), which may port to constructors: the rule leaves them alone.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

import numpy as np

from conba.source.records import Unit

CLASS_LANGUAGES = frozenset({"java", "csharp", "cpp", "python", "javascript", "typescript", "kotlin", "scala",
                             "php", "ruby", "swift", "dart"})
CONSTRUCTOR_NAMES = {"<init>": None, "__init__": {"python"}, "__new__": {"python"},
                     "constructor": {"javascript", "typescript"}, "initialize": {"ruby"},
                     "__construct": {"php"}, "init": {"swift"}}
_JS = frozenset({"javascript", "typescript"})


def _last(qualname: str) -> str:
    return qualname.rsplit(".", 1)[-1]


def constructor_mask(units: Sequence[Unit]) -> np.ndarray:
    """bool (n,): which of ``units`` are constructors (see the module docstring)."""
    # (file, receiver qualname) -> line spans of the functions it is the receiver of
    members: dict[tuple[str, str], list[tuple[int, int]]] = defaultdict(list)
    for u in units:
        if u.language in _JS and u.kind == "function" and "." in u.qualname:
            members[(u.file, u.qualname.rsplit(".", 1)[0])].append((u.start_line, u.end_line))
    out = np.zeros(len(units), dtype=bool)
    for i, u in enumerate(units):
        if u.kind != "function":
            continue
        last = _last(u.qualname)
        langs = CONSTRUCTOR_NAMES.get(last, ())
        if last in CONSTRUCTOR_NAMES and (langs is None or u.language in langs):
            out[i] = True
        elif u.language in _JS:
            outside = any(s > u.end_line or e < u.start_line for s, e in members.get((u.file, u.qualname), ()))
            out[i] = last[:1].isupper() or outside
    return out


def kind_mismatch(source: Sequence[Unit], target: Sequence[Unit]) -> np.ndarray:
    """bool (n, m): pairs of a constructor and a function that is not one, both in :data:`CLASS_LANGUAGES`."""
    cs, ct = constructor_mask(source), constructor_mask(target)
    ls = np.array([u.language in CLASS_LANGUAGES for u in source], dtype=bool)
    lt = np.array([u.language in CLASS_LANGUAGES for u in target], dtype=bool)
    return (cs[:, None] != ct[None, :]) & ls[:, None] & lt[None, :]
