"""Synonym perturbation: consistent renaming of identifiers declared in the snippet.

A name is *renameable* when the snippet declares it (a variable, parameter, loop variable or local
function) and every occurrence of its text is an identifier in a renameable position. Names that
also occur as a member (``obj.name``), a type, an import, a keyword argument, inside a macro body or
a parse error, names that are called but not declared as functions here (library calls such as
``max``), builtins, ``main`` and dunder names are never renamed. Level ``p`` renames
``p × (number of renameable names)`` names (stochastically rounded, so the expected fraction is
exactly ``p``), each at every occurrence, to a synonym or neutral word that occurs nowhere in the
snippet and is no keyword of any supported language.
"""

from __future__ import annotations

import builtins
import random
from typing import Any

from conba.augment.names import fresh_name
from conba.augment.specs import ANY, ATOMIC, NON_NAME_FIELDS, LangSpec
from conba.augment.syntax import apply_edits, field_of, stochastic_round, text, words

_PY_BUILTINS = frozenset(dir(builtins))


def is_name(leaf: Any, spec: LangSpec) -> bool:
    """Whether ``leaf`` is an identifier that ``spec`` may rename."""
    return leaf.type in spec.idents and (spec.ident_filter is None or spec.ident_filter(leaf))


def _is_member(leaf: Any, spec: LangSpec) -> bool:
    parent = leaf.parent
    if parent is None:
        return False
    fields = spec.members.get(parent.type)
    if fields and (ANY in fields or field_of(leaf) in fields):
        return True
    return bool(spec.member_fn and spec.member_fn(leaf))


def declared_leaves(node: Any, spec: LangSpec) -> list[Any]:
    """Name leaves declared by ``node`` (a child in a declaring field), searching through patterns."""
    if is_name(node, spec) and node.child_count == 0:
        return [node]
    if node.type not in spec.patterns:
        return []
    out = []
    for i, child in enumerate(node.children):
        if child.is_named and node.field_name_for_child(i) not in NON_NAME_FIELDS:
            out += declared_leaves(child, spec)
    return out


class NameTable:
    """Every name leaf of a snippet, the declared names and the names that must not be renamed."""

    def __init__(self, root: Any, src: bytes, spec: LangSpec, language: str):
        self.occurrences: dict[str, list[Any]] = {}
        declared: set[str] = set()
        blocking: set[str] = set()
        called: set[str] = set()
        functions: set[str] = set()
        stack = [(root, False, False)]
        while stack:
            node, in_error, in_string = stack.pop()
            in_error = in_error or node.type == "ERROR"
            if "comment" in node.type:
                continue
            if node.type in ATOMIC:  # only the interpolations of a string hold names
                in_string = True
            self._declarations(node, spec, declared, called, functions)
            if node.child_count == 0 and (not in_string or is_name(node, spec)):
                self._leaf(node, src, spec, in_error, blocking)
            stack.extend((c, in_error, in_string) for c in reversed(node.children))
        self.declared, self.functions = declared, functions
        excluded = set(spec.exclude) | (called - functions)
        if language == "python":
            excluded |= _PY_BUILTINS
        self.renameable = sorted(
            (n for n in declared - blocking - excluded
             if n in self.occurrences and not (n.startswith("__") and n.endswith("__"))),
            key=lambda n: self.occurrences[n][0].start_byte)

    def _declarations(self, node: Any, spec: LangSpec, declared: set[str], called: set[str],
                      functions: set[str]) -> None:
        fields = spec.decls.get(node.type)
        if fields:
            for i, child in enumerate(node.children):
                if child.is_named and (ANY in fields or node.field_name_for_child(i) in fields):
                    declared.update(_leaf_text(leaf) for leaf in declared_leaves(child, spec))
        for table, out in ((spec.calls, called), (spec.functions, functions)):
            fld = table.get(node.type)
            if fld is None:
                continue
            target = node.child_by_field_name(fld) if fld else (node.named_children or [None])[0]
            if target is not None and is_name(target, spec) and target.child_count == 0:
                out.add(_leaf_text(target))

    def _leaf(self, leaf: Any, src: bytes, spec: LangSpec, in_error: bool, blocking: set[str]) -> None:
        t = text(leaf, src)
        if leaf.parent is not None and leaf.parent.type in spec.ignore_parents:
            return
        if is_name(leaf, spec):
            if in_error or _is_member(leaf, spec):
                blocking.add(t)
            else:
                self.occurrences.setdefault(t, []).append(leaf)
        elif leaf.type == "preproc_arg":
            params = set()
            macro = leaf.parent
            if macro is not None and macro.type == "preproc_function_def":
                plist = macro.child_by_field_name("parameters")
                params = {text(c, src) for c in plist.named_children} if plist is not None else set()
            blocking.update(words(t) - params)
        elif leaf.type not in ATOMIC and t.strip():
            blocking.add(t)  # same text as another kind of token: a type, member, label, keyword...


def _leaf_text(leaf: Any) -> str:
    return leaf.text.decode("utf-8", errors="replace")


def rename(root: Any, src: bytes, spec: LangSpec, language: str, level: float,
           rng: random.Random) -> tuple[str, int, int]:
    """Returns (new code, names renamed, renameable names)."""
    table = NameTable(root, src, spec, language)
    names = table.renameable
    k = min(stochastic_round(level * len(names), rng), len(names))
    if k == 0:
        return src.decode("utf-8", errors="replace"), 0, len(names)
    chosen = rng.sample(names, k)
    taken = words(src.decode("utf-8", errors="replace"))
    new_names = {old: fresh_name(old, taken, rng) for old in chosen}
    edits = [(leaf.start_byte, leaf.end_byte, new_names[old]) for old in chosen for leaf in table.occurrences[old]]
    return apply_edits(src, edits), k, len(names)
