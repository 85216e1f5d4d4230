"""The name-key truth of a name-keeping port: which source functions are unported, and how right the map's
*missing* list is against it (the research suite's ``conba_research.map_evaluate`` has the rest of the measuring).

This module is the one definition of the **name key** the truth uses (the issue: "a source function is
unported when no target function has its name key"); the map's name anchors use the same folded keys.

* **Literal** key (:func:`literal_key`, ports_dev's README): the last name component, lower case, without
  ``_`` or punctuation: ``diff_main`` = ``diffMain`` = ``DiffMain``; ``Dmp.diff_main`` -> ``diffmain``.
* **Folded** keys (:func:`truth_keys` with ``folded``, :func:`conba.mapping.names.folded_keys`): the literal
  key, plus the keys a namespace that moved between the name and the receiver, or was dropped, gives, as
  ports do (rust-brotli: ``ZopfliCostModelSetFromCommands`` -> ``ZopfliCostModel.set_from_commands``,
  ``BrotliStoreMetaBlock`` -> ``store_meta_block``); two functions share a key when their key sets meet:

  - receiver folding: the receiver type's words (generics dropped) before or after the name's
    (``InitCommand`` = ``Command.init``);
  - prefix dropping: the name without its first one or two words, when at least two words and 8 letters are
    left (``BrotliStoreMetaBlock`` -> ``storemetablock``). No list of namespaces: any first word may go, so
    the folded rule also calls a few unrelated pairs ported (ports_dev: Python ``fenced_code_block`` and
    JavaScript ``code_block`` share ``codeblock``), a deliberate trade against listing each project's
    prefixes.

A source function is **unported** by the literal rule when no target function has its literal key, by the
folded rule when none shares a folded key with it. Nothing is language-specific but the graded set below.

Only **graded** source functions count: left out, as ports_dev's groups leave them out, are constructors
(:func:`conba.mapping.kinds.constructor_mask`: ``<init>``, ``__init__``, ``constructor``, a JavaScript
constructor function: a capitalised name, also inside a namespace, or the receiver of prototype methods such
as ``diff_match_patch`` and ``diff_match_patch.patch_obj``, whose ports are named ``__init__`` or
``Patch``), generic method names (``toString``, ``equals``, C++ ``operator==``, ``hashCode``, ``__str__``,
Rust ``new`` / ``default`` / ``drop`` ...), C/C++ functions whose name is a macro (all capitals: ``FN(...)``
templates, whose real names exist only after the preprocessor), and non-function units (windows).
"""

from __future__ import annotations

import re
from typing import Any

from conba.eval.repo_functions import name_key
from conba.mapping.assign import MISSING
from conba.mapping.kinds import constructor_mask
from conba.mapping.names import GENERIC, folded_keys, name_parts
from conba.mapping.records import PortMap
from conba.source.records import Unit


def ratio(a: int, b: int) -> float | None:
    return round(a / b, 4) if b else None


def graded(unit: Unit, constructor: bool | None = None) -> bool:
    """Whether the name-key truth says anything about ``unit`` (see the module docstring). ``constructor``:
    whether it is one, from :func:`conba.mapping.kinds.constructor_mask` over all of its side (None: from
    ``unit`` alone, which misses a JavaScript constructor function known only by its prototype methods)."""
    parts = name_parts(unit.qualname)
    last = parts[-1] if parts else ""
    if unit.kind != "function" or not last or name_key(last) in GENERIC or last.startswith("operator"):
        return False
    if unit.language in ("c", "cpp") and re.fullmatch(r"[A-Z0-9_]+", last):
        return False
    return not (constructor_mask([unit])[0] if constructor is None else constructor)


def graded_ids(port: PortMap) -> set[int | None]:
    """The ids of the graded source functions of ``port``."""
    ctor = constructor_mask([f.source for f in port.functions])
    return {f.source.id for f, c in zip(port.functions, ctor, strict=True) if graded(f.source, bool(c))}


def literal_key(qualname: str) -> str:
    """The literal name key: last component, lower case, no ``_`` or punctuation (``Dmp.diff_main`` ->
    ``diffmain``)."""
    return name_key(qualname)


def truth_keys(qualname: str, folded: bool = False) -> set[str]:
    """The keys the truth matches ``qualname`` by: its literal key, or (``folded``) all its folded keys."""
    return folded_keys(qualname) if folded else {literal_key(qualname)}


def unported(port: PortMap, folded: bool = False) -> dict[int | None, bool]:
    """graded source unit id -> True when no target function of ``port`` shares a key with it
    (:func:`truth_keys`: the literal key, ``folded``: the folded ones)."""
    ids = graded_ids(port)
    keys: set[str] = set().union(*(truth_keys(u.qualname, folded) for u in port.targets))
    return {f.source.id: not (truth_keys(f.source.qualname, folded) & keys)
            for f in port.functions if f.source.id in ids}


def evaluate_missing(port: PortMap, folded: bool = False) -> dict[str, Any]:
    """Missing precision and recall of ``port`` over its graded source functions against :func:`unported`."""
    truth = unported(port, folded)
    reported = [f for f in port.functions if f.status == MISSING and f.source.id in truth]
    absent = sum(truth.values())
    right = sum(truth[f.source.uid] for f in reported)
    prefix = "folded_" if folded else ""
    return {f"{prefix}graded": len(truth), f"{prefix}unported_by_name": absent,
            f"{prefix}reported_missing": len(reported), f"{prefix}missing_right": right,
            f"{prefix}missing_precision": ratio(right, len(reported)), f"{prefix}missing_recall": ratio(right, absent)}


def missing_scores(port: PortMap) -> dict[str, Any]:
    """:func:`evaluate_missing` by the literal and by the folded rule (keys of the latter start ``folded_``)."""
    return evaluate_missing(port) | evaluate_missing(port, folded=True)
