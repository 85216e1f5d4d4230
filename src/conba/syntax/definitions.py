"""The definitions of a parsed snippet that the dead-helper pass can drop.

Functions and methods, classes (and Rust ``impl`` / trait blocks), C/C++ ``#define`` macros,
``typedef`` and ``using X = ...`` aliases, found by walking the top-level structure only (namespaces,
class bodies, preprocessor blocks, ``export`` / ``template`` / decorator wrappers), never function
bodies. Each definition knows the names it is referenced by, its parent class, and whether it is
kept whenever its class is (constructors, overrides, operators, well-known interface methods).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from conba.syntax.parse import Parsed

_JS_FAMILIES = ("javascript", "typescript")
WORD = re.compile(rb"[A-Za-z_\x80-\xff][A-Za-z0-9_\x80-\xff]*")
_JS_FUNCTION_VALUES = frozenset({"arrow_function", "function_expression", "function", "generator_function"})
_C_DECLARATOR_STOPS = frozenset({"identifier", "field_identifier", "qualified_identifier", "operator_name",
                                 "destructor_name", "template_function", "type_identifier"})
# Methods called by the language or a library rather than by name in the snippet
IMPLICIT_METHODS = frozenset(
    b"toString equals hashCode compareTo compare run call iterator close clone finalize "   # Java
    b"ToString Equals GetHashCode CompareTo Compare Dispose GetEnumerator "                 # C#
    b"to_s to_str inspect each eql hash coerce method_missing respond_to_missing initialize "  # Ruby
    b"constructor valueOf".split())                                                         # JS
_KEEP_MARKERS = frozenset({b"override", b"Override", b"operator"})
_ALWAYS_KEPT_TYPES = frozenset({"constructor_declaration", "compact_constructor_declaration",
                                "destructor_declaration", "operator_declaration",
                                "conversion_operator_declaration"})


@dataclass
class Definition:
    """One droppable definition. ``node`` spans everything dropped with it (wrappers included)."""

    node: Any
    kind: str                      # function | class | macro
    names: tuple[bytes, ...]       # what code mentions to use it (empty: operators and the like)
    parent: int | None = None      # index of the enclosing class definition
    keep: bool = False             # kept whenever its parent is (or always, at the top level)
    api: bool = False              # exported (JS/TS): kept with all its members
    entry: bool = False            # a main function
    children: list[int] = field(default_factory=list)

    @property
    def start(self) -> int:
        return self.node.start_byte

    @property
    def end(self) -> int:
        return self.node.end_byte


def collect(parsed: Parsed) -> list[Definition]:
    """Every definition, parents before their children, siblings in source order."""
    defs: list[Definition] = []
    _visit(parsed.root, None, parsed, defs)
    if parsed.family in _JS_FAMILIES:
        exported = _js_exports(parsed)
        for d in defs:
            if d.parent is None and not exported.isdisjoint(d.names):
                d.api = d.keep = True
    return defs


def _js_exports(parsed: Parsed) -> set[bytes]:
    """Names a JS/TS module exports by name: ``export { a, b as c }``, ``export default a``,
    ``module.exports = a`` / ``{ a, b }``, ``exports.a = a``."""
    out: set[bytes] = set()
    src = parsed.src
    for node in parsed.root.named_children:
        if node.type == "export_statement" and node.child_by_field_name("declaration") is None:
            out.update(WORD.findall(src, node.start_byte, node.end_byte))
        elif node.type == "expression_statement" and src.startswith((b"module.exports", b"exports."),
                                                                     node.start_byte):
            out.update(WORD.findall(src, node.start_byte, node.end_byte))
    return out


def _visit(node: Any, parent: int | None, parsed: Parsed, defs: list[Definition]) -> None:
    rules = parsed.rules
    for child in node.named_children:
        found = _definition(child, child, parent, parsed, defs)
        if found is not None:
            index, body = found
            if body is not None:
                _visit(body, index, parsed, defs)
        elif child.type in rules.transparent:
            _visit(child, parent, parsed, defs)


def _definition(node: Any, span: Any, parent: int | None, parsed: Parsed,
                defs: list[Definition]) -> tuple[int, Any] | None:
    """Register ``node`` (dropped as ``span``) when it is a definition: (index, node whose children
    hold its members, or None)."""
    rules, src, t = parsed.rules, parsed.src, node.type
    if t in rules.wrappers:
        inner = next((c for c in node.named_children if _defines(c, parsed)), None)
        if inner is None:
            return None
        found = _definition(inner, span, parent, parsed, defs)
        if found is not None and t == "export_statement":
            defs[found[0]].keep = defs[found[0]].api = True  # exported: the snippet's API
        return found
    if t in rules.functions:
        name, keep = _function_name(node, src)
        d = Definition(span, "function", (name,) if name else (), parent, keep or not name)
        d.keep = d.keep or _kept_method(node, d, parsed, defs) or _registered(node, span, parsed)
        d.entry = _is_main(node, d, parsed)
        return _add(d, defs), None
    if t in rules.classes:
        return _add(Definition(span, "class", _names(_class_name_node(node), src), parent), defs), node
    if t in rules.macros:
        return _add(Definition(span, "macro", _macro_names(node, src), parent), defs), None
    binding = _js_binding(node, src) if parsed.family in _JS_FAMILIES else None
    if binding is not None:
        return _add(Definition(span, "function", (binding,), parent), defs), None
    if parsed.family in ("c", "cpp") and t == "declaration" and _prototype(node):
        name, keep = _function_name(node, src)
        return _add(Definition(span, "function", (name,) if name else (), parent, keep or not name), defs), None
    return None


def _defines(node: Any, parsed: Parsed) -> bool:
    r = parsed.rules
    return (node.type in r.functions or node.type in r.classes or node.type in r.macros
            or node.type in r.wrappers
            or (node.type in ("lexical_declaration", "variable_declaration")
                and _js_binding(node, parsed.src) is not None))


def _add(d: Definition, defs: list[Definition]) -> int:
    defs.append(d)
    if d.parent is not None:
        defs[d.parent].children.append(len(defs) - 1)
    return len(defs) - 1


def _text(node: Any, src: bytes) -> bytes:
    return src[node.start_byte:node.end_byte]


def normalize_name(text: bytes) -> bytes:
    """``Foo::bar`` -> ``bar``, ``Vec<T>`` -> ``Vec``, ``valid?`` -> ``valid``; b"" when no word."""
    words = WORD.findall(text.split(b"<", 1)[0])
    return words[-1] if words else b""


def _names(node: Any, src: bytes) -> tuple[bytes, ...]:
    name = normalize_name(_text(node, src)) if node is not None else b""
    return (name,) if name else ()


def _function_name(node: Any, src: bytes) -> tuple[bytes, bool]:
    """(name, always kept): C/C++ operators and destructors are kept, other names come from the
    ``name`` field or the declarator chain."""
    name = node.child_by_field_name("name")
    if name is None:
        decl = node.child_by_field_name("declarator")
        while decl is not None and decl.type not in _C_DECLARATOR_STOPS:
            decl = decl.child_by_field_name("declarator")
        name = decl
    if name is None:
        return b"", True
    text = _text(name, src)
    if name.type in ("operator_name", "destructor_name") or text.lstrip().startswith((b"~", b"operator")):
        return b"", True
    return normalize_name(text), False


def _class_name_node(node: Any) -> Any:
    return node.child_by_field_name("name") or node.child_by_field_name("type")


def _macro_names(node: Any, src: bytes) -> tuple[bytes, ...]:
    """``#define NAME``, ``using NAME = ...``, ``typedef ... NAME, *PNAME;`` (+ a defined struct's tag)."""
    if node.type != "type_definition":
        return _names(node.child_by_field_name("name"), src)
    names = [normalize_name(_text(d, src)) for d in node.children_by_field_name("declarator")]
    kind = node.child_by_field_name("type")
    if kind is not None and kind.child_by_field_name("body") is not None:
        names.extend(_names(kind.child_by_field_name("name"), src))
    return tuple(n for n in names if n)


def _js_binding(node: Any, src: bytes) -> bytes | None:
    """``const f = (x) => ...`` / ``let g = function () {...}``: the name."""
    if node.type not in ("lexical_declaration", "variable_declaration"):
        return None
    decls = [c for c in node.named_children if c.type == "variable_declarator"]
    if len(decls) != 1:
        return None
    value, name = decls[0].child_by_field_name("value"), decls[0].child_by_field_name("name")
    if value is None or name is None or value.type not in _JS_FUNCTION_VALUES or name.type != "identifier":
        return None
    return _text(name, src)


def _prototype(node: Any) -> bool:
    """A C/C++ declaration of a function without a body: ``int gcd(int, int);``."""
    decl = node.child_by_field_name("declarator")
    while decl is not None and decl.type in ("pointer_declarator", "reference_declarator"):
        decl = decl.child_by_field_name("declarator")
    return decl is not None and decl.type == "function_declarator"


def _header_words(node: Any, src: bytes) -> set[bytes]:
    return set(WORD.findall(src, node.start_byte, _body_start(node)))


def _kept_method(node: Any, d: Definition, parsed: Parsed, defs: list[Definition]) -> bool:
    """Constructors, destructors, operators, overrides, dunders / magic methods, well-known interface
    methods, Rust trait-impl methods; Go ``init`` and exported methods (they satisfy interfaces)."""
    name = d.names[0] if d.names else b""
    if parsed.family == "go":
        return name == b"init" or (node.type == "method_declaration" and name[:1].isupper())
    if d.parent is None:
        return False
    parent = defs[d.parent]
    if node.type in _ALWAYS_KEPT_TYPES or name.startswith(b"__") or name in IMPLICIT_METHODS:
        return True
    if name in parent.names:  # C++ constructor
        return True
    if parent.node.type == "trait_item" or (parent.node.type == "impl_item"
                                            and parent.node.child_by_field_name("trait") is not None):
        return True
    return not _KEEP_MARKERS.isdisjoint(_header_words(node, parsed.src))


def _registered(node: Any, span: Any, parsed: Parsed) -> bool:
    """Whether a decorator / annotation / attribute hands the function to a framework, which calls it
    without naming it in the snippet (``@app.route``, ``@Test``, ``[HttpGet]``, ``#[test]``).
    Decorations that only wrap or describe (``@lru_cache``, ``@Override``, ``#[inline]``) do not count."""
    src, family = parsed.src, parsed.family
    if family == "python":
        if span.type != "decorated_definition":
            return False
        names = [_decoration_name(src[c.start_byte + 1:c.end_byte]) for c in span.named_children
                 if c.type == "decorator"]
    elif family == "rust":
        names, prev = [], span.prev_named_sibling
        while prev is not None and prev.type == "attribute_item":
            names.append(_decoration_name(src[prev.start_byte + 2:prev.end_byte]))
            prev = prev.prev_named_sibling
    elif family == "csharp":
        names = [_decoration_name(src[a.start_byte:a.end_byte]) for c in node.named_children
                 if c.type == "attribute_list" for a in c.named_children if a.type == "attribute"]
    elif family in ("java", "kotlin", "typescript", "php"):
        names = [_decoration_name(m) for m in _ANNOTATION.findall(src, node.start_byte, _body_start(node))]
    else:
        return False
    return any(name and name not in _PASSIVE_DECORATIONS for name in names)


_ANNOTATION = re.compile(rb"(?:@|#\[)\s*([A-Za-z_][\w.:\\]*)")
# Decorations that do not register the function anywhere (a dropped helper may carry them)
_PASSIVE_DECORATIONS = frozenset(
    b"lru_cache cache cached_property property staticmethod classmethod wraps njit jit vectorize "
    b"setter getter deleter abstractmethod overload total_ordering "                         # Python
    b"Override SuppressWarnings Deprecated SafeVarargs FunctionalInterface JvmStatic JvmOverloads "
    b"Nullable NonNull NotNull Contract Suppress "                                         # Java / Kotlin
    b"MethodImpl Obsolete Pure DebuggerStepThrough Conditional AggressiveInlining "         # C#
    b"inline allow deny warn must_use cold track_caller doc deprecated rustfmt clippy cfg_attr "  # Rust
    b"ReturnTypeWillChange".split())                                                          # PHP


def _decoration_name(text: bytes) -> bytes:
    """``app.route("/")`` -> ``route``, ``functools.lru_cache(None)`` -> ``lru_cache``."""
    return normalize_name(text.split(b"(", 1)[0].split(b"[", 1)[0])


def _body_start(node: Any) -> int:
    body = node.child_by_field_name("body")
    return body.start_byte if body is not None else node.end_byte


def _is_main(node: Any, d: Definition, parsed: Parsed) -> bool:
    if not d.names or d.names[0] not in (b"main", b"Main"):
        return False
    if parsed.rules.static_main:
        return b"static" in _header_words(node, parsed.src)
    return d.parent is None
