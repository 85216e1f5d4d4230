"""Swap perturbation: independent adjacent statements exchange places.

Two neighbouring statements of one block may swap when both are simple (declarations, assignments,
expression statements; nothing that returns, jumps, yields or throws) and a syntactic def/use
analysis finds them independent:

* neither writes a name the other reads or writes (declared and assigned names, ``++``/``--``
  operands, and every name inside a call, whose arguments and receiver it may mutate);
* not both touch the outside world (any call may do I/O: ``input()`` twice must keep its order);
* neither writes memory through a subscript / member / pointer while the other reads it or calls;
* neither calls a function defined in the snippet (it may read or write anything).

Level ``p`` moves ``p × (number of statements)`` statements, i.e. swaps that many / 2 disjoint
independent pairs (stochastically rounded), as many as exist.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from conba.augment.insert import all_statements
from conba.augment.rename import NameTable, declared_leaves, is_name
from conba.augment.specs import ANY, LangSpec
from conba.augment.syntax import apply_edits, stochastic_round, text, walk

CALLS = frozenset({"call", "call_expression", "method_invocation", "invocation_expression", "function_call_expression",
                   "member_call_expression", "scoped_call_expression", "object_creation_expression", "new_expression",
                   "nullsafe_member_call_expression", "macro_invocation"})
UNSWAPPABLE = frozenset({"yield", "await", "yield_expression", "await_expression", "throw_expression",
                         "jump_expression", "return", "break", "next", "redo", "retry", "goto_statement",
                         "return_statement", "throw_statement", "raise_statement", "ERROR"})
_HEAP_HINTS = ("subscript", "attribute", "member", "field", "element", "array_access", "pointer", "navigation",
               "index", "scoped_property")
_STREAMS = frozenset({"cin", "cout", "cerr", "clog"})


@dataclass
class Effects:
    reads: set[str] = field(default_factory=set)
    writes: set[str] = field(default_factory=set)
    world: bool = False
    heap_read: bool = False
    heap_write: bool = False
    opaque: bool = False

    def conflicts(self, other: Effects) -> bool:
        if self.opaque or other.opaque or (self.world and other.world):
            return True
        if self.writes & (other.reads | other.writes) or other.writes & self.reads:
            return True
        return (self.heap_write and (other.heap_read or other.heap_write)) or (other.heap_write and self.heap_read)


def _names(node: Any, spec: LangSpec) -> set[str]:
    return {n.text.decode("utf-8", "replace") for n in walk(node) if n.child_count == 0 and is_name(n, spec)}


def effects(stmt: Any, spec: LangSpec, table: NameTable, language: str) -> Effects | None:
    """What ``stmt`` reads and writes, or None when it must not move."""
    eff = Effects()
    for node in walk(stmt):
        t = node.type
        if t in UNSWAPPABLE or node.is_missing:
            return None
        if node.child_count == 0 and is_name(node, spec):
            name = node.text.decode("utf-8", "replace")
            eff.reads.add(name)
            if name in table.functions:
                eff.opaque = True
            if language == "ruby" and name not in table.declared:
                eff.world = True  # a Ruby bare word that is no local variable is a method call
            if language == "cpp" and name in _STREAMS:
                eff.world = eff.heap_read = eff.heap_write = True
                eff.writes |= _names(stmt, spec)
        if any(h in t for h in _HEAP_HINTS):
            eff.heap_read = True
        if t in CALLS:
            eff.world = eff.heap_read = eff.heap_write = True
            eff.writes |= _names(node, spec)
        target = node.child_by_field_name("left") if "assignment" in t else None
        if target is None and any(c.type in ("++", "--") for c in node.children):
            target = next((c for c in node.named_children), None)
        if target is not None:
            eff.writes |= _names(target, spec)
            if any(any(h in n.type for h in _HEAP_HINTS) for n in walk(target)):
                eff.heap_write = True
        fields = spec.decls.get(t)
        if fields:
            for i, child in enumerate(node.children):
                if child.is_named and (ANY in fields or node.field_name_for_child(i) in fields):
                    eff.writes |= {leaf.text.decode("utf-8", "replace") for leaf in declared_leaves(child, spec)}
    return eff


def swap(root: Any, src: bytes, spec: LangSpec, language: str, level: float,
         rng: random.Random) -> tuple[str, int, int]:
    """Returns (new code, statements moved, statements in the snippet)."""
    blocks = all_statements(root, spec)
    n = sum(len(b) for b in blocks)
    k = stochastic_round(level * n / 2, rng)
    if k == 0:
        return src.decode("utf-8", errors="replace"), 0, n
    table = NameTable(root, src, spec, language)
    cache: dict[int, Effects | None] = {}

    def eff(s: Any) -> Effects | None:
        if s.start_byte not in cache:
            cache[s.start_byte] = effects(s, spec, table, language) if s.type in spec.simple else None
        return cache[s.start_byte]

    pairs = []
    for block in blocks:
        for a, b in zip(block, block[1:]):
            if src[a.end_byte:b.start_byte].strip(b" \t\r\n;"):
                continue
            ea, eb = eff(a), eff(b)
            if ea is not None and eb is not None and not ea.conflicts(eb):
                pairs.append((a, b))
    rng.shuffle(pairs)
    used: set[int] = set()
    edits: list[tuple[int, int, str]] = []
    for a, b in pairs:
        if len(edits) == 2 * k:
            break
        if a.start_byte in used or b.start_byte in used:
            continue
        used |= {a.start_byte, b.start_byte}
        edits += [(a.start_byte, a.end_byte, text(b, src)), (b.start_byte, b.end_byte, text(a, src))]
    return apply_edits(src, edits), len(edits), n
