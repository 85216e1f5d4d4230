"""Languages: detection by file extension and the tree-sitter grammar behind each one.

Languages with a grammar get function-level extraction; the others (``GRAMMARS`` has no entry)
are indexed whole-file or in line windows.
"""

from __future__ import annotations

import functools
import importlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# extension (lower case, with dot) -> language name (the name the model and the index use)
EXTENSIONS: dict[str, str] = {
    ".py": "python", ".pyi": "python", ".pyw": "python",
    ".java": "java",
    ".c": "c", ".h": "c",
    ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".c++": "cpp", ".hpp": "cpp", ".hh": "cpp", ".hxx": "cpp",
    ".ipp": "cpp", ".tpp": "cpp",
    ".cs": "csharp",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
    ".ts": "typescript", ".mts": "typescript", ".cts": "typescript", ".tsx": "typescript",
    ".go": "go",
    ".rs": "rust",
    ".kt": "kotlin", ".kts": "kotlin",
    ".php": "php",
    ".rb": "ruby",
    # no grammar: whole-file / windowed fallback
    ".scala": "scala", ".sc": "scala", ".swift": "swift", ".lua": "lua", ".hs": "haskell", ".ml": "ocaml",
    ".r": "r", ".jl": "julia", ".dart": "dart", ".pl": "perl", ".pm": "perl", ".sh": "shell",
    ".bash": "shell", ".ex": "elixir", ".exs": "elixir", ".erl": "erlang", ".clj": "clojure",
    ".fs": "fsharp", ".vb": "vbnet", ".groovy": "groovy", ".zig": "zig", ".nim": "nim", ".f90": "fortran",
    ".m": "objective-c", ".mm": "objective-cpp",
}


@dataclass(frozen=True)
class Grammar:
    """How to find functions in one language's syntax tree."""

    module: str                      # Python package of the grammar
    attr: str = "language"           # function in it returning the language pointer
    functions: frozenset[str] = field(default_factory=frozenset)   # node types that are functions
    containers: frozenset[str] = field(default_factory=frozenset)  # named scopes (classes, modules...)


def _g(module: str, functions: str, containers: str, attr: str = "language") -> Grammar:
    return Grammar(module, attr, frozenset(functions.split()), frozenset(containers.split()))


_JS_FUNCS = "function_declaration generator_function_declaration method_definition"
_JS_CONTAINERS = "class_declaration class abstract_class_declaration"

GRAMMARS: dict[str, Grammar] = {
    "python": _g("tree_sitter_python", "function_definition", "class_definition"),
    "java": _g("tree_sitter_java", "method_declaration constructor_declaration",
               "class_declaration interface_declaration enum_declaration record_declaration"),
    "c": _g("tree_sitter_c", "function_definition", ""),
    "cpp": _g("tree_sitter_cpp", "function_definition",
              "class_specifier struct_specifier namespace_definition"),
    "csharp": _g("tree_sitter_c_sharp", "method_declaration constructor_declaration local_function_statement",
                 "class_declaration struct_declaration interface_declaration record_declaration "
                 "namespace_declaration"),
    "javascript": _g("tree_sitter_javascript", _JS_FUNCS, _JS_CONTAINERS),
    "typescript": _g("tree_sitter_typescript", _JS_FUNCS, _JS_CONTAINERS + " interface_declaration",
                     attr="language_typescript"),
    "tsx": _g("tree_sitter_typescript", _JS_FUNCS, _JS_CONTAINERS, attr="language_tsx"),
    "go": _g("tree_sitter_go", "function_declaration method_declaration", ""),
    "rust": _g("tree_sitter_rust", "function_item", "impl_item trait_item mod_item"),
    "kotlin": _g("tree_sitter_kotlin", "function_declaration", "class_declaration object_declaration"),
    "php": _g("tree_sitter_php", "function_definition method_declaration",
              "class_declaration trait_declaration interface_declaration", attr="language_php"),
    "ruby": _g("tree_sitter_ruby", "method singleton_method", "class module"),
}


def detect_language(path: str | Path) -> str | None:
    """The language of a file from its extension, or None when unsupported."""
    return EXTENSIONS.get(Path(path).suffix.lower())


def grammar_key(path: str | Path, language: str) -> str:
    """Which grammar parses this file: ``.tsx`` needs the TSX grammar, and ``.h`` headers are parsed
    with the C++ grammar (a superset for function definitions) since they are often C++."""
    suffix = Path(str(path)).suffix.lower()
    return {".tsx": "tsx", ".h": "cpp"}.get(suffix, language)


@functools.cache
def get_parser(key: str) -> Any | None:
    """A tree-sitter parser for ``key``, or None when the grammar package is not installed."""
    spec = GRAMMARS.get(key)
    if spec is None:
        return None
    try:
        from tree_sitter import Language, Parser

        lang = Language(getattr(importlib.import_module(spec.module), spec.attr)())
        return Parser(lang)
    except (ImportError, AttributeError, ValueError, TypeError):
        return None
