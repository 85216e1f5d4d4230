"""Cut a source file into code units: functions and methods via tree-sitter, else file / line windows.

A named function declared directly in a function's body (a Python ``def`` in a ``def``, a JS ``function
helper()`` or ``var helper = function`` inside a function, a Rust ``fn`` item in a ``fn``) is a unit of its
own in the languages whose grammar says ``nested``, named ``parent.helper``, and its parent's unit keeps only
its header (the body becomes ``...`` in Python, ``{}`` elsewhere): a JS or Python port often nests the
helpers that its Java or C++ original declares as methods, and the parent would otherwise read as the
helper. Functions inside expressions (callbacks, anonymous classes, expression-bodied arrows) stay part of
their parent. Anonymous functions at the top level are descended into, so functions inside an IIFE or a
callback-style module are still found.
Functions with an empty body (``private Foo() {}``, ``fn noop() {}``, ``def f(): pass``) and
declarations without a body are skipped: they say nothing about behaviour and would all be
near-identical "clones" of each other. The comments directly above a function (no blank line between) are
part of its unit and its first line, as a Python docstring is part of its function: the shipped model
reads ``code+docs``, and a port keeps the doc comment (JSDoc above ``Foo.prototype.bar = function``,
the docstring of ``def bar``). A wrapper that opens with part of a function's declaration (C++
``template <class T>``, JS/TS ``export``) is part of its unit, and the doc above it is the function's.
Constructors of Java, C# and C++ are named ``Class.<init>`` (as in JVM stack traces) rather than ``Class.Class``.
"""

from __future__ import annotations

import textwrap
from typing import Any

from conba.source.c_macros import parse_copy
from conba.source.c_recover import JoinedDefinition, chunk_ranges, parse_range, split_body
from conba.source.records import Unit
from conba.syntax.languages import GRAMMARS, Grammar, get_parser, grammar_key

WINDOW_LINES = 60        # fallback windows for files without a grammar (or that fail to parse)
WHOLE_FILE_LINES = 80    # files up to this many lines are one unit
_JS_FUNCTION_VALUES = {"arrow_function", "function_expression", "function", "generator_function"}
_BODY_TYPES = {"block", "statement_block", "constructor_body", "compound_statement", "function_body"}
_PY_STUB_STATEMENTS = {"pass_statement", "ellipsis", "string"}
CONSTRUCTOR = "<init>"
_DECLARATOR_WRAPPERS = {"pointer_declarator", "reference_declarator", "function_declarator",
                        "parenthesized_declarator", "attributed_declarator"}


def extract_units(path: str, text: str, language: str, errors: list[int] | None = None) -> list[Unit]:
    """Units of one file, in source order. ``errors``, when given, gets the line of the file's first
    syntax error (none when it parses cleanly): its functions are then those that could be recovered."""
    key = grammar_key(path, language)
    parser = get_parser(key) if key in GRAMMARS else None
    if parser is None:
        return fallback_units(path, text, language)
    src = text.encode("utf-8")
    parsed = parse_copy(src) if key in ("c", "cpp") else src  # same offsets, header macros blanked
    try:
        tree = parser.parse(parsed)
    except (ValueError, RuntimeError):
        return fallback_units(path, text, language)
    units: list[Unit] = []
    _visit(tree.root_node, src, GRAMMARS[key], [], path, language, units)
    if tree.root_node.has_error:
        if errors is not None:
            errors.append(_first_error_line(tree.root_node))
        if key in ("c", "cpp"):
            units = _recover(units, parsed, src, parser.language, GRAMMARS[key], path, language)
    if not units and tree.root_node.has_error:
        return fallback_units(path, text, language)
    return units


def _first_error_line(node: Any) -> int:
    """The 1-based line of the first ERROR or missing node under ``node``."""
    while True:
        if node.type == "ERROR" or node.is_missing:
            return node.start_point[0] + 1
        node = next((c for c in node.children if c.has_error or c.is_missing), None) or node
        if not node.children or not any(c.has_error or c.is_missing for c in node.children):
            return node.start_point[0] + 1


def _recover(units: list[Unit], parsed: bytes, src: bytes, ts_language: Any, grammar: Grammar, path: str,
             language: str) -> list[Unit]:
    """A C/C++ file with syntax errors: its units that lie within one top-level piece
    (:func:`conba.source.c_recover.chunk_ranges`) as parsed whole, plus those found by parsing each piece
    on its own where the whole parse found none (the functions an error swallowed)."""
    pieces = chunk_ranges(parsed)
    if len(pieces) < 2:
        return units
    rows = [(p.start_point[0] + 1, p.end_point[0] + 1) for p in pieces]

    def piece(line: int) -> int:
        return next((i for i, (a, b) in enumerate(rows) if a <= line <= b), -1)

    kept = [u for u in units if piece(u.start_line) == piece(u.end_line) != -1]
    spread = [u for u in units if piece(u.start_line) != piece(u.end_line) or piece(u.start_line) == -1]
    taken = [(u.start_line, u.end_line) for u in kept]
    for i, span in enumerate(pieces):
        if any(a <= rows[i][0] and rows[i][1] <= b for a, b in taken):
            continue  # the piece lies inside a unit found whole
        found: list[Unit] = []
        _visit(parse_range(ts_language, parsed, span).root_node, src, grammar, [], path, language, found)
        kept.extend(u for u in found if not any(a <= u.end_line and u.start_line <= b for a, b in taken))
    # a unit across pieces stays when parsing the pieces found nothing in its place
    kept.extend(u for u in spread if not any(k.start_line <= u.end_line and u.start_line <= k.end_line for k in kept))
    return sorted(kept, key=lambda u: (u.start_line, u.end_line))


def fallback_units(path: str, text: str, language: str) -> list[Unit]:
    """The whole file when short, else consecutive windows of ``WINDOW_LINES`` lines."""
    from pathlib import Path

    lines = text.splitlines()
    if not any(line.strip() for line in lines):
        return []
    stem = Path(path).stem
    if len(lines) <= WHOLE_FILE_LINES:
        return [Unit(path, stem, language, 1, max(len(lines), 1), text, kind="file")]
    units = []
    for start in range(0, len(lines), WINDOW_LINES):
        chunk = lines[start:start + WINDOW_LINES]
        if not any(line.strip() for line in chunk):
            continue
        end = start + len(chunk)
        units.append(Unit(path, f"{stem}:L{start + 1}-{end}", language, start + 1, end,
                          "\n".join(chunk) + "\n", kind="window"))
    return units


def _text(node: Any, src: bytes) -> str:
    return src[node.start_byte:node.end_byte].decode("utf-8", errors="replace")


def _visit(node: Any, src: bytes, grammar: Grammar, scope: list[str], path: str, language: str,
           out: list[Unit]) -> None:
    for child in node.named_children:
        kind = child.type
        body = split_body(child) if "function_definition" in grammar.functions else None
        if body is not None:  # K&R with a pointer return type: tree-sitter-c parts header and body
            joined = JoinedDefinition(child, body)
            _emit(joined, joined, _function_name(joined, src), src, grammar, scope, path, language, out)
            continue
        if kind in ("compound_statement", "declaration") and _joined_before(child):
            continue
        if kind in grammar.functions:
            _emit(child, _head(child, grammar), _function_name(child, src), src, grammar, scope, path, language,
                  out)
            continue
        js_fn = _js_function_binding(child, src)
        if js_fn is not None:
            span, name, _value = js_fn
            _emit(span, _head(span, grammar), name, src, grammar, scope, path, language, out, binding=True)
            continue
        if kind in grammar.containers:
            container = _container_name(child, src)
            _visit(child, src, grammar, scope + [container] if container else scope, path, language, out)
            continue
        _visit(child, src, grammar, scope, path, language, out)


def _joined_before(node: Any) -> bool:
    """Whether ``node`` (a block or a K&R parameter declaration) belongs to a function joined by
    :func:`conba.source.c_recover.split_body` from an earlier sibling."""
    prev = node.prev_named_sibling
    while prev is not None and prev.type in ("declaration", "comment"):
        body = split_body(prev)
        if body is not None:
            return body.end_byte >= node.end_byte
        prev = prev.prev_named_sibling
    return False


def _emit(node: Any, span: Any, name: str | None, src: bytes, grammar: Grammar, scope: list[str],
          path: str, language: str, out: list[Unit], binding: bool = False) -> bool:
    """Append the unit of function ``node`` (then those of the functions nested in it) to ``out``;
    False when it is not a unit (no body, or an empty one)."""
    own = _text(node, src)
    if not binding and "\n" not in own.strip() and own.rstrip().endswith(";"):
        return False  # a declaration without a body
    if _empty_body(node):
        return False
    first = doc_comment_start(span, src, grammar)
    receiver = _go_receiver(node, src)
    parts = scope + ([receiver] if receiver else []) + (name.split(".") if name else ["<anonymous>"])
    if node.type in grammar.constructors or (
            grammar.class_named_constructors and len(parts) >= 2 and _bare(parts[-1]) == _bare(parts[-2])
            and node.child_by_field_name("type") is None):  # a return type: a function named like its namespace
        parts[-1] = CONSTRUCTOR
    nested: list[Unit] = []
    bodies = _nested_functions(_function_value(node, binding, src), src, grammar, parts, path, language, nested)
    text = src[first.start_byte:span.end_byte]
    for body in sorted(bodies, key=lambda b: -b.start_byte):  # from the end, so earlier offsets hold
        stub = b"..." if body.type == "block" and grammar_key(path, language) == "python" else b"{}"
        text = text[:body.start_byte - first.start_byte] + stub + text[body.end_byte - first.start_byte:]
    # re-indent the first line like the others so dedent works for methods
    line_start = src.rfind(b"\n", 0, first.start_byte) + 1
    prefix = src[line_start:first.start_byte].decode("utf-8", errors="replace")
    indent = prefix if not prefix.strip() else ""
    code = textwrap.dedent(indent + text.decode("utf-8", errors="replace"))
    out.append(Unit(path, ".".join(parts), language, first.start_point[0] + 1, span.end_point[0] + 1,
                    code.rstrip() + "\n"))
    out.extend(nested)
    return True


def _body(node: Any) -> Any:
    body = node.child_by_field_name("body")
    return body if body is not None else next((c for c in node.named_children if c.type in _BODY_TYPES), None)


def _function_value(node: Any, binding: bool, src: bytes) -> Any:
    """The function node itself, or for a binding (``var f = function () {...}``) its function value."""
    if not binding:
        return node
    found = _js_function_binding(node, src)
    return found[2] if found is not None else None


def _nested_functions(fn: Any, src: bytes, grammar: Grammar, parts: list[str], path: str, language: str,
                      out: list[Unit]) -> list[Any]:
    """Emit the named functions declared directly in ``fn``'s block body (statements of the body, through
    Python decorators) into ``out``; returns the body nodes of those emitted, for the parent to elide."""
    body = _body(fn) if fn is not None and grammar.nested else None
    if body is None or body.type not in _BODY_TYPES:
        return []
    bodies = []
    for child in body.named_children:
        if child.type == "decorated_definition":
            child = child.child_by_field_name("definition") or child
        value = None
        if child.type in grammar.functions:
            name, value, binding = _function_name(child, src), child, False
        else:
            js_fn = _js_function_binding(child, src)
            if js_fn is None:
                continue
            name, value, binding = js_fn[1], js_fn[2], True
        inner = _body(value)
        if inner is None or inner.type not in _BODY_TYPES or name is None:
            continue  # an expression-bodied arrow stays part of its parent
        if _emit(child, _head(child, grammar), name, src, grammar, parts, path, language, out, binding=binding):
            bodies.append(inner)
    return bodies


def _head(node: Any, grammar: Grammar) -> Any:
    """The outermost of the ``grammar.heads`` wrapping ``node`` (C++ ``template <class T>`` lines, JS/TS
    ``export``), else ``node``: the unit's span, whose doc comment is the one above the wrapper."""
    while node.parent is not None and node.parent.type in grammar.heads:
        node = node.parent
    return node


def doc_comment_start(span: Any, src: bytes, grammar: Grammar | None = None) -> Any:
    """The first of the comments directly above ``span`` (each on its own lines, no blank line between
    them or before ``span``), else ``span``: a function's doc comment (JSDoc, Javadoc, ``///``, ``//``
    lines) is part of its unit, as a Python docstring is part of its function. The ``grammar``'s
    attributes (Rust ``#[inline]``, decorators) may sit between the comments and ``span``: a doc above
    them takes them into the unit, while attributes without a doc above leave the unit's start at
    ``span``. A Rust inner doc (``//!``, ``/*!``) documents its module, not the function below it."""
    attributes = grammar.attributes if grammar is not None else frozenset()
    enclosing = grammar.enclosing if grammar is not None else frozenset()
    first = top = node = span  # top: the highest comment or attribute reached
    while True:
        prev = node.prev_sibling
        if prev is None and node.parent is not None and node.parent.type in enclosing:
            node = node.parent  # a decorated definition opens with its decorators, a block with its function
            continue
        if prev is None or src[src.rfind(b"\n", 0, prev.start_byte) + 1:prev.start_byte].strip():
            break
        gap = top.start_point[0] - _last_row(prev, src)
        if "comment" in prev.type and gap == 1 and not _inner_doc(prev):
            first = prev
        elif not (prev.type in attributes and gap in (0, 1)):
            break
        top = node = prev
    return first


def _last_row(node: Any, src: bytes) -> int:
    """The last row of ``node``'s text: tree-sitter-rust's ``///`` comments end on the next row (at
    column 0), as they hold their newline."""
    row = node.end_point[0]
    if node.end_point[1] == 0 and node.end_byte > node.start_byte and src[node.end_byte - 1:node.end_byte] == b"\n":
        row -= 1
    return row


def _inner_doc(node: Any) -> bool:
    return any(c.type == "inner_doc_comment_marker" for c in node.children)


def _bare(name: str) -> str:
    """``Foo<T>`` -> ``Foo`` (C++ template arguments)."""
    return name.split("<", 1)[0].strip()


def _empty_body(node: Any) -> bool:
    """Whether a function's body holds nothing but comments (or, in Python, only ``pass``/``...``/a docstring).
    C++ constructors with a member initializer list are not empty."""
    body = node.child_by_field_name("body")
    if body is None:
        body = next((c for c in node.named_children if c.type in _BODY_TYPES), None)
    if body is not None and body.type == "function_body":  # Kotlin: { block } or = expression
        inner = body.named_children
        body = inner[0] if len(inner) == 1 and inner[0].type == "block" else None
    if body is None or body.type not in _BODY_TYPES:
        return False  # expression bodies (arrow functions, Kotlin `= x`), Ruby: never empty here
    if any(c.type == "field_initializer_list" for c in node.named_children):
        return False
    statements = [c for c in body.named_children if "comment" not in c.type]
    if node.type == "function_definition" and body.type == "block":  # Python
        return all(_python_stub(c) for c in statements)
    return not statements


def _python_stub(node: Any) -> bool:
    if node.type == "pass_statement":
        return True
    return node.type == "expression_statement" and all(c.type in _PY_STUB_STATEMENTS for c in node.named_children)


def _function_name(node: Any, src: bytes) -> str | None:
    name = node.child_by_field_name("name")
    if name is not None:
        return _text(name, src)
    decl = node.child_by_field_name("declarator")  # C / C++
    while decl is not None and decl.type in _DECLARATOR_WRAPPERS:
        inner = decl.child_by_field_name("declarator")
        if inner is None:
            break
        decl = inner
    if decl is not None:
        return _text(decl, src).replace("::", ".")
    return None


def _container_name(node: Any, src: bytes) -> str | None:
    for field in ("name", "type"):
        n = node.child_by_field_name(field)
        if n is not None:
            return _text(n, src).replace("::", ".")
    return None


def _go_receiver(node: Any, src: bytes) -> str | None:
    if node.type != "method_declaration":
        return None
    receiver = node.child_by_field_name("receiver")
    if receiver is None:
        return None
    stack = [receiver]
    while stack:
        n = stack.pop(0)
        if n.type == "type_identifier":
            return _text(n, src)
        stack.extend(n.named_children)
    return None


def _js_function_binding(node: Any, src: bytes) -> tuple[Any, str, Any] | None:
    """``const f = (x) => ...`` / ``exports.f = function () {...}``: (span node, name, function value)."""
    if node.type in ("lexical_declaration", "variable_declaration"):
        decls = [c for c in node.named_children if c.type == "variable_declarator"]
        if len(decls) == 1:
            value = decls[0].child_by_field_name("value")
            name = decls[0].child_by_field_name("name")
            if value is not None and name is not None and value.type in _JS_FUNCTION_VALUES:
                return node, _text(name, src), value
    if node.type == "expression_statement" and node.named_children:
        expr = node.named_children[0]
        if expr.type == "assignment_expression":
            right = expr.child_by_field_name("right")
            left = expr.child_by_field_name("left")
            if right is not None and left is not None and right.type in _JS_FUNCTION_VALUES:
                return node, js_assigned_name(_text(left, src)), right
    return None


def js_assigned_name(target: str) -> str:
    """The name of a function assigned to ``target``: ``Foo.prototype.bar`` -> ``Foo.bar`` (the method of
    class ``Foo``, as a Java or Python port names it), ``Foo.bar`` -> ``Foo.bar``, ``exports.f`` /
    ``module.exports.f`` / ``this.f`` / ``self.f`` -> ``f``."""
    parts = [p.strip() for p in target.split(".") if p.strip() and p.strip() != "prototype"]
    while len(parts) > 1 and parts[0] in ("module", "exports", "this", "self", "window", "global"):
        parts = parts[1:]
    return ".".join(parts) or target
