"""Constructors: which functions build an object, and the rule that a constructor ports only to a constructor.

A function is a **constructor** (:func:`constructor_mask`) when its name says so and its code agrees:
``<init>`` (the extractor's name for Java and C# constructors; in C / C++, where it names a function called
like its scope, only when no return type precedes the name: ``Patch::Patch()``, not a free ``int
hamming_distance()`` in ``namespace hamming_distance``), Python ``__init__`` / ``__new__``, JavaScript /
TypeScript ``constructor``, Ruby ``initialize``, PHP ``__construct``, Swift ``init``; or a JavaScript /
TypeScript constructor function: the receiver of another function of its file defined outside its own lines
(``diff_match_patch`` with its prototype methods ``diff_match_patch.diff_main``; a helper nested inside a
function lies within its lines and does not count), or a capitalised function that builds an object
(assigns ``this.x`` / ``this[i]``, or returns an object literal or a ``new`` object: ``Node``, ``Parser``,
``diff_match_patch.Diff``; not ``IsPowerOfTwo``, which returns a value).

In two languages that both have constructors (:data:`CLASS_LANGUAGES`), a constructor that only sets its
fields (no control flow: :func:`sets_fields_only`) and a function that is not a constructor are not
counterparts (:func:`kind_mismatch`): ``conba map`` lowers such a pair by ``constructor_penalty`` (default
1: never assigned), so C++ ``Patch::isNull`` (which tests the fields a constructor sets) is not the port of
the JavaScript constructor ``patch_obj``. A constructor that computes may be the port of a function (C#
``SieveOfEratosthenes()`` sieves, as JavaScript ``sieveOfEratosthenes`` does). Languages without
constructors (C, Rust, Go) build objects with plain functions (Rust ``new``, C ``InitCommand``), which may
port to constructors: the rule leaves them alone.
"""

from __future__ import annotations

import re
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


_BUILDS = re.compile(r"\bthis\s*(?:\.\s*\w+|\[[^\]]*\])\s*=(?!=)|\breturn\s*(?:\{|new\b)")
_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_QUALIFIERS = {"explicit", "inline", "constexpr", "virtual"}
_CONTROL = re.compile(r"\b(?:if|for|foreach|while|do|switch|try)\b")


def _last(qualname: str) -> str:
    return qualname.rsplit(".", 1)[-1]


def _no_return_type(code: str) -> bool:
    """Whether a C / C++ function's header names no return type before the name (a constructor's)."""
    head = _COMMENTS.sub(" ", code).split("(", 1)[0]
    head = re.sub(r"^\s*template\s*<.*?>", " ", head, flags=re.S)  # template <typename T> (one level)
    words = [w for w in re.findall(r"[\w:~<>]+", head) if w not in _QUALIFIERS]
    return len(words) <= 1


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
            out[i] = last != "<init>" or u.language not in ("c", "cpp") or _no_return_type(u.code)
        elif u.language in _JS:
            outside = any(s > u.end_line or e < u.start_line for s, e in members.get((u.file, u.qualname), ()))
            out[i] = outside or (last[:1].isupper() and _BUILDS.search(_COMMENTS.sub(" ", u.code)) is not None)
    return out


def sets_fields_only(unit: Unit) -> bool:
    """Whether ``unit``'s code has no control flow (no ``if``, loop, ``switch`` or ``try``; comments left out):
    a constructor that only sets its fields (or hands its work to another function)."""
    return _CONTROL.search(_COMMENTS.sub(" ", unit.code)) is None


def kind_mismatch(source: Sequence[Unit], target: Sequence[Unit]) -> np.ndarray:
    """bool (n, m): pairs of a constructor that only sets its fields and a function that is not a
    constructor, both in :data:`CLASS_LANGUAGES`. A constructor that computes (the sieve of a
    ``SieveOfEratosthenes`` class) may port to a plain function."""
    cs, ct = constructor_mask(source), constructor_mask(target)
    ps = cs & np.array([sets_fields_only(u) for u in source], dtype=bool)
    pt = ct & np.array([sets_fields_only(u) for u in target], dtype=bool)
    ls = np.array([u.language in CLASS_LANGUAGES for u in source], dtype=bool)
    lt = np.array([u.language in CLASS_LANGUAGES for u in target], dtype=bool)
    return ((ps[:, None] & ~ct[None, :]) | (~cs[:, None] & pt[None, :])) & ls[:, None] & lt[None, :]
