"""Dead helpers: definitions that the snippet's entry points never reach, by a call graph over names.

Entry points: a ``main`` / ``Main`` function (Java and C#: a static one), C# top-level statements,
and in scripts (Python, JS/TS, Ruby, PHP) top-level statements that run something: calls, loops and
conditionals that call, ``if __name__ == "__main__":``, assignments that call a function defined in
the snippet (``ans = solve(n)``; ``n = int(input())`` and ``module.exports = {...}`` are not). A
snippet without an entry point (a library file, one function) keeps every function and class and
loses only the C/C++ macros and type aliases that nothing in it mentions (a shared header's
``#define rep ...`` / ``typedef ... vi;``).

With entry points, everything outside definitions is kept and its identifiers are the roots; a kept
definition keeps every definition whose name occurs among its identifiers (its own text, minus
nested definitions, comments, docstrings and imports), its class, and its class's always-kept
members (all members of an exported JS/TS class). The rest is dropped (definitions with parse errors
never are). Names over-approximate
calls (``Math.max`` keeps a helper ``max``), so the pass can keep too much but not too little.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from conba.syntax.definitions import WORD, Definition, collect
from conba.syntax.parse import Parsed

_CALL = re.compile(rb"([A-Za-z_\x80-\xff][A-Za-z0-9_\x80-\xff]*)\s*\(")
_NOT_CALLS = frozenset(b"if elif while for foreach switch catch return and or not in with except function "
                       b"typeof sizeof await yield assert lambda match elseif unless until".split())
_PY_ASSIGN = frozenset({"assignment", "augmented_assignment"})
_PY_COMPOUND = frozenset({"if_statement", "for_statement", "while_statement", "with_statement",
                          "try_statement", "match_statement"})
_JS_ASSIGN = frozenset({"assignment_expression", "augmented_assignment_expression"})
_JS_COMPOUND = frozenset({"if_statement", "for_statement", "for_in_statement", "while_statement",
                          "do_statement", "try_statement", "switch_statement"})
_RUBY_ASSIGN = frozenset({"assignment", "operator_assignment"})
_RUBY_RUNS = frozenset({"call", "identifier", "if", "unless", "while", "until", "for", "case", "begin",
                        "if_modifier", "unless_modifier", "while_modifier", "until_modifier"})
_PHP_RUNS = frozenset({"echo_statement", "if_statement", "for_statement", "foreach_statement",
                       "while_statement", "do_statement", "switch_statement", "try_statement"})


@dataclass
class DeadCode:
    nodes: list[Any]   # outermost dropped definitions, in source order
    helpers: int = 0   # functions, methods and classes dropped (members of dropped classes included)
    macros: int = 0    # C/C++ macros and type aliases dropped


def dead_definitions(parsed: Parsed, masked: bytes) -> DeadCode:
    """What to drop. ``masked``: the source with comments, docstrings and imports blanked out."""
    defs = collect(parsed)
    if not defs:
        return DeadCode([])
    top = [d for d in defs if d.parent is None]
    top_ranges = list(_gaps(0, len(masked), top))
    local = {n for d in top if d.kind == "function" for n in d.names}
    entry = any(d.entry for d in defs) or any(
        _runs(node, parsed.family, masked, local) for node in _top_statements(parsed.root, top_ranges, masked))
    if not entry:
        if not any(d.kind == "macro" for d in defs):
            return DeadCode([])
        for d in defs:  # no entry point: every function and class stays; only unused macros go
            if d.kind != "macro":
                d.keep = True
    reached = _reach(defs, _words(masked, top_ranges), masked)
    return _drop(defs, reached, masked)


def _gaps(start: int, end: int, inner: list[Definition]) -> Iterator[tuple[int, int]]:
    """[start, end) minus the spans of ``inner`` (sorted, non-overlapping)."""
    pos = start
    for d in sorted(inner, key=lambda x: x.start):
        if d.start > pos:
            yield pos, d.start
        pos = max(pos, d.end)
    if end > pos:
        yield pos, end


def _words(masked: bytes, ranges: list[tuple[int, int]]) -> set[bytes]:
    out: set[bytes] = set()
    for a, b in ranges:
        out.update(WORD.findall(masked, a, b))
    return out


def _top_statements(root: Any, ranges: list[tuple[int, int]], masked: bytes) -> Iterator[Any]:
    """Top-level nodes outside definitions that still have text once comments/imports are blanked."""
    i = 0
    for node in root.named_children:
        while i < len(ranges) and ranges[i][1] <= node.start_byte:
            i += 1
        if i == len(ranges):
            return
        a, b = ranges[i]
        if a <= node.start_byte and node.end_byte <= b and masked[node.start_byte:node.end_byte].strip():
            yield node


def _calls(node: Any, masked: bytes) -> set[bytes]:
    return set(_CALL.findall(masked, node.start_byte, node.end_byte)) - _NOT_CALLS


def _runs(node: Any, family: str, masked: bytes, local: set[bytes]) -> bool:
    """Whether a top-level statement runs code (an entry point)."""
    t = node.type
    first = node.named_children[0] if node.named_child_count else None
    first_type = first.type if first is not None else ""
    if family == "csharp":
        return t == "global_statement"
    if family == "python":
        if t == "expression_statement":
            if first_type in ("string", "concatenated_string") and node.named_child_count == 1:
                return False
            return bool(_calls(node, masked) & local) if first_type in _PY_ASSIGN else True
        if t == "if_statement" and b"__name__" in masked[node.start_byte:node.end_byte]:
            return True
        return t in ("print_statement", "exec_statement") or (t in _PY_COMPOUND and bool(_calls(node, masked)))
    if family in ("javascript", "typescript"):
        if t == "expression_statement":
            if first_type == "string":
                return False
            return bool(_calls(node, masked) & local) if first_type in _JS_ASSIGN else True
        if t in ("lexical_declaration", "variable_declaration"):
            return bool(_calls(node, masked) & local)
        return t in _JS_COMPOUND and bool(_calls(node, masked))
    if family == "ruby":
        if t in _RUBY_ASSIGN:  # Ruby calls need no parentheses: any mention of a local function
            return bool(set(WORD.findall(masked, node.start_byte, node.end_byte)) & local)
        return t in _RUBY_RUNS
    if family == "php":
        if t == "expression_statement":
            return bool(_calls(node, masked) & local) if first_type == "assignment_expression" else True
        return t in _PHP_RUNS
    return False


def _reach(defs: list[Definition], roots: set[bytes], masked: bytes) -> set[int]:
    by_name: dict[bytes, list[int]] = defaultdict(list)
    for i, d in enumerate(defs):
        for name in d.names:
            by_name[name].append(i)
    reached: set[int] = set()
    stack: list[int] = []

    def reach(i: int) -> None:
        if i not in reached:
            reached.add(i)
            stack.append(i)

    for i, d in enumerate(defs):
        if d.entry or (d.keep and d.parent is None):
            reach(i)
    for word in roots:  # the reached set does not depend on the order
        for j in by_name.get(word, ()):
            reach(j)
    while stack:
        d = defs[stack.pop()]
        if d.parent is not None:
            reach(d.parent)
        for c in d.children:
            if defs[c].keep or d.api:
                if d.api:
                    defs[c].api = True
                reach(c)
        own = list(_gaps(d.start, d.end, [defs[c] for c in d.children]))
        for word in _words(masked, own):
            for j in by_name.get(word, ()):
                reach(j)
    return reached


def _drop(defs: list[Definition], reached: set[int], masked: bytes) -> DeadCode:
    out = DeadCode([])
    gone: set[int] = set()
    for i, d in enumerate(defs):  # parents come before their children
        inside = d.parent is not None and d.parent in gone
        if i in reached or not (inside or not d.node.has_error) or not masked[d.start:d.end].strip():
            continue  # reached, unsafe to cut, or inside a removed import / test module
        gone.add(i)
        if not inside:
            out.nodes.append(d.node)
        if d.kind == "macro":
            out.macros += 1
        else:
            out.helpers += 1
    out.nodes.sort(key=lambda n: n.start_byte)
    return out
