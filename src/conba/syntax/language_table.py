"""The one table of languages: each :class:`Language` entry says everything conba knows about it.

An entry holds the file extensions that mean the language, the tree-sitter grammar that finds its
functions for the index (:class:`Grammar`, :mod:`conba.source.extract`), the node types of the input
view (:class:`Rules`, :mod:`conba.syntax.view`) and the few per-language knobs of parsing. Adding a
language is adding one entry to ``TABLE`` (or :func:`register` at run time): ``EXTENSIONS``,
``GRAMMARS`` and ``RULES`` (re-exported by :mod:`conba.syntax.languages` and :mod:`conba.syntax.rules`,
where the rest of conba reads them) are derived from it and kept in step by :func:`register`.

A language without a grammar (``grammar=None``) is indexed whole-file or in line windows and goes to
the model as it is. The node-type names were read off the grammars' trees of real files
(tests/syntax/test_syntax_view.py has one per language).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


def _set(names: str) -> frozenset[str]:
    return frozenset(names.split())


@dataclass(frozen=True)
class Grammar:
    """How to find functions in one language's syntax tree (the index's extraction)."""

    module: str                      # Python package of the grammar
    attr: str = "language"           # function in it returning the language pointer
    functions: frozenset[str] = field(default_factory=frozenset)     # node types that are functions
    containers: frozenset[str] = field(default_factory=frozenset)    # named scopes (classes, modules...)
    constructors: frozenset[str] = field(default_factory=frozenset)  # function nodes named Class.<init>
    class_named_constructors: bool = False  # a function named like its scope is a constructor (C++)
    # sibling nodes that may sit between a function and its doc comment (Rust ``#[inline]``, decorators)
    attributes: frozenset[str] = field(default_factory=frozenset)
    # nodes a function (or its attributes) opens, with the comment above them outside: Python
    # ``decorated_definition``, and ``block``, whose first comment tree-sitter-python puts before the block
    enclosing: frozenset[str] = field(default_factory=frozenset)
    # nodes that wrap one function and open with part of its declaration (C++ ``template <...>``, JS/TS
    # ``export``, as Rust's ``pub``): the unit spans the outermost of them, and its doc is the one above it
    heads: frozenset[str] = field(default_factory=frozenset)
    # a named function declared in a function's body is a unit of its own (Python, JS/TS, Rust, Kotlin:
    # languages with nested functions; C/C++ parse Qt's ``foreach (...) {...}`` as a function definition)
    nested: bool = False


@dataclass(frozen=True)
class Rules:
    """The node types the input view works with, and which language's special cases it applies."""

    comments: frozenset[str]
    imports: frozenset[str]            # directive nodes dropped outright (filters in imports.py)
    functions: frozenset[str]          # function / method definitions (and bodiless declarations)
    classes: frozenset[str] = field(default_factory=frozenset)      # droppable containers of methods
    transparent: frozenset[str] = field(default_factory=frozenset)  # walked through, never dropped
    wrappers: frozenset[str] = field(default_factory=frozenset)     # one definition inside: drop both
    macros: frozenset[str] = field(default_factory=frozenset)       # C/C++ #define / typedef / using X =
    script: bool = False               # top-level statements run (Python, JS/TS, Ruby, PHP)
    static_main: bool = False          # main must be static to be an entry point (Java, C#)
    # whose algorithmic special cases (docstrings, decorators, exports, entry points, require lines...)
    # the view's code applies; a language that copies another's rules keeps its family
    family: str = ""


@dataclass(frozen=True)
class Language:
    """One language: its name (the one the model and the index use), extensions and grammars."""

    name: str
    extensions: tuple[str, ...]        # lower case, with the dot
    grammar: Grammar | None = None     # under the grammar key ``name``; None: no function extraction
    rules: Rules | None = None         # the input view's rules, for every grammar key of the language
    variants: Mapping[str, Grammar] = field(default_factory=dict)  # other grammars of it, by key
    extension_grammars: Mapping[str, str] = field(default_factory=dict)  # extension -> grammar key
    retry_grammar: str | None = None   # a snippet parsed with errors is tried with this one too
    open_tag: str | None = None        # a snippet without this marker is parsed with ``tagless_grammar``
    tagless_grammar: str | None = None
    highlight: str | None = None       # Pygments lexer of the HTML clone report; None: plain text

    @property
    def keys(self) -> tuple[str, ...]:
        """Every grammar key of the language (its own first), or none without a grammar."""
        return ((self.name,) if self.grammar else ()) + tuple(self.variants)


def _g(module: str, functions: str, containers: str, attr: str = "language", constructors: str = "",
       class_named_constructors: bool = False, attributes: str = "", enclosing: str = "",
       heads: str = "", nested: bool = False) -> Grammar:
    return Grammar(module, attr, _set(functions), _set(containers), _set(constructors), class_named_constructors,
                   _set(attributes), _set(enclosing), _set(heads), nested)


def _plain(name: str, extensions: str, highlight: str | None = None) -> Language:
    """A language without a grammar: whole-file / windowed units, no view."""
    return Language(name, tuple(extensions.split()), highlight=highlight)


_C_PREPROC = "preproc_if preproc_ifdef preproc_else preproc_elif preproc_elifdef"
_JS_FUNCS = "function_declaration generator_function_declaration method_definition"
_JS_CONTAINERS = "class_declaration class abstract_class_declaration"
_PHP_GRAMMAR = ("tree_sitter_php", "function_definition method_declaration",
                "class_declaration trait_declaration interface_declaration")
_TS_RULES = Rules(
    comments=_set("comment html_comment"), imports=_set("import_statement"),
    functions=_set(_JS_FUNCS + " function_signature"),
    classes=_set("class_declaration abstract_class_declaration"),
    transparent=_set("class_body"), wrappers=_set("export_statement"), script=True, family="typescript")
_PHP_RULES = Rules(
    comments=_set("comment"),
    imports=_set("namespace_use_declaration namespace_definition require_expression "
                 "require_once_expression include_expression include_once_expression"),
    functions=_set("function_definition method_declaration"),
    classes=_set("class_declaration trait_declaration interface_declaration enum_declaration"),
    transparent=_set("declaration_list namespace_definition compound_statement"), script=True, family="php")

_ENTRIES: list[Language] = [
    Language("python", (".py", ".pyi", ".pyw"),
             _g("tree_sitter_python", "function_definition", "class_definition", attributes="decorator",
                enclosing="decorated_definition block", nested=True),
             Rules(comments=_set("comment"),
                   imports=_set("import_statement import_from_statement future_import_statement"),
                   functions=_set("function_definition"), classes=_set("class_definition"),
                   transparent=_set("block"), wrappers=_set("decorated_definition"), script=True,
                   family="python"),
             highlight="python"),
    Language("java", (".java",),
             _g("tree_sitter_java", "method_declaration constructor_declaration",
                "class_declaration interface_declaration enum_declaration record_declaration",
                constructors="constructor_declaration"),
             Rules(comments=_set("line_comment block_comment"),
                   imports=_set("import_declaration package_declaration"),
                   functions=_set("method_declaration constructor_declaration compact_constructor_declaration"),
                   classes=_set("class_declaration interface_declaration enum_declaration record_declaration "
                                "annotation_type_declaration"),
                   transparent=_set("class_body interface_body enum_body enum_body_declarations "
                                    "annotation_type_body"),
                   static_main=True, family="java"),
             highlight="java"),
    # ``.h`` headers are parsed with the C++ grammar (a superset for function definitions): often C++
    Language("c", (".c", ".h"),
             _g("tree_sitter_c", "function_definition", "", class_named_constructors=True),
             Rules(comments=_set("comment"), imports=_set("preproc_include"),
                   functions=_set("function_definition"),
                   transparent=_set(_C_PREPROC + " linkage_specification declaration_list"),
                   macros=_set("preproc_def preproc_function_def type_definition"), family="c"),
             extension_grammars={".h": "cpp"}, highlight="c"),
    Language("cpp", (".cc", ".cpp", ".cxx", ".c++", ".hpp", ".hh", ".hxx", ".ipp", ".tpp"),
             _g("tree_sitter_cpp", "function_definition", "class_specifier struct_specifier namespace_definition",
                class_named_constructors=True, heads="template_declaration"),
             Rules(comments=_set("comment"), imports=_set("preproc_include using_declaration"),
                   functions=_set("function_definition"),
                   classes=_set("class_specifier struct_specifier"),
                   transparent=_set(_C_PREPROC + " linkage_specification declaration_list namespace_definition "
                                    "field_declaration_list"),
                   wrappers=_set("template_declaration"),
                   macros=_set("preproc_def preproc_function_def type_definition alias_declaration"),
                   family="cpp"),
             highlight="cpp"),
    Language("csharp", (".cs",),
             _g("tree_sitter_c_sharp", "method_declaration constructor_declaration local_function_statement",
                "class_declaration struct_declaration interface_declaration record_declaration "
                "namespace_declaration", constructors="constructor_declaration"),
             Rules(comments=_set("comment"),
                   imports=_set("using_directive file_scoped_namespace_declaration"),
                   functions=_set("method_declaration constructor_declaration destructor_declaration "
                                  "operator_declaration conversion_operator_declaration local_function_statement"),
                   classes=_set("class_declaration struct_declaration interface_declaration record_declaration"),
                   transparent=_set("namespace_declaration declaration_list"),
                   wrappers=_set("global_statement"), static_main=True, family="csharp"),
             highlight="csharp"),
    Language("javascript", (".js", ".mjs", ".cjs", ".jsx"),
             _g("tree_sitter_javascript", _JS_FUNCS, _JS_CONTAINERS, heads="export_statement", nested=True),
             Rules(comments=_set("comment html_comment"), imports=_set("import_statement"),
                   functions=_set(_JS_FUNCS), classes=_set("class_declaration"),
                   transparent=_set("class_body"), wrappers=_set("export_statement"), script=True,
                   family="javascript"),
             highlight="javascript"),
    # JSX inside a ``.ts`` snippet: the TSX grammar is tried too, and the tree with fewer errors wins
    Language("typescript", (".ts", ".mts", ".cts", ".tsx"),
             _g("tree_sitter_typescript", _JS_FUNCS, _JS_CONTAINERS + " interface_declaration",
                attr="language_typescript", attributes="decorator", heads="export_statement", nested=True),
             _TS_RULES,
             variants={"tsx": _g("tree_sitter_typescript", _JS_FUNCS, _JS_CONTAINERS, attr="language_tsx",
                                 attributes="decorator", heads="export_statement", nested=True)},
             extension_grammars={".tsx": "tsx"}, retry_grammar="tsx", highlight="typescript"),
    Language("go", (".go",),
             _g("tree_sitter_go", "function_declaration method_declaration", ""),
             Rules(comments=_set("comment"), imports=_set("package_clause import_declaration"),
                   functions=_set("function_declaration method_declaration"), family="go"),
             highlight="go"),
    Language("rust", (".rs",),
             _g("tree_sitter_rust", "function_item", "impl_item trait_item mod_item", attributes="attribute_item",
                nested=True),
             Rules(comments=_set("line_comment block_comment"),
                   imports=_set("use_declaration extern_crate_declaration mod_item"),
                   functions=_set("function_item function_signature_item"),
                   classes=_set("impl_item trait_item"),
                   transparent=_set("mod_item declaration_list"), family="rust"),
             highlight="rust"),
    Language("kotlin", (".kt", ".kts"),
             _g("tree_sitter_kotlin", "function_declaration", "class_declaration object_declaration", nested=True),
             Rules(comments=_set("line_comment block_comment"), imports=_set("package_header import"),
                   functions=_set("function_declaration"),
                   classes=_set("class_declaration object_declaration"),
                   transparent=_set("class_body companion_object enum_class_body"), family="kotlin"),
             highlight="kotlin"),
    # PHP code without a ``<?php`` tag (snippets): the plain grammar would read it all as inline HTML
    Language("php", (".php",),
             _g(*_PHP_GRAMMAR, attr="language_php"),
             _PHP_RULES,
             variants={"php-only": _g(*_PHP_GRAMMAR, attr="language_php_only")},
             open_tag="<?", tagless_grammar="php-only", highlight="php"),
    Language("ruby", (".rb",),
             _g("tree_sitter_ruby", "method singleton_method", "class module"),
             Rules(comments=_set("comment"), imports=frozenset(),  # require lines: imports.py
                   functions=_set("method singleton_method"), classes=_set("class module"),
                   transparent=_set("body_statement"), script=True, family="ruby"),
             highlight="ruby"),
    # no grammar: whole-file / windowed fallback
    _plain("scala", ".scala .sc", "scala"), _plain("swift", ".swift", "swift"), _plain("lua", ".lua", "lua"),
    _plain("haskell", ".hs", "haskell"), _plain("ocaml", ".ml"), _plain("r", ".r", "r"),
    _plain("julia", ".jl", "julia"), _plain("dart", ".dart", "dart"), _plain("perl", ".pl .pm", "perl"),
    _plain("shell", ".sh .bash", "bash"), _plain("elixir", ".ex .exs", "elixir"), _plain("erlang", ".erl"),
    _plain("clojure", ".clj"), _plain("fsharp", ".fs"), _plain("vbnet", ".vb"), _plain("groovy", ".groovy"),
    _plain("zig", ".zig"), _plain("nim", ".nim"), _plain("fortran", ".f90"), _plain("objective-c", ".m"),
    _plain("objective-cpp", ".mm"),
]

# language name -> entry: the one place a language is declared
TABLE: dict[str, Language] = {lang.name: lang for lang in _ENTRIES}

# Views derived from TABLE (the same dict objects for the whole run; :func:`register` refills them)
EXTENSIONS: dict[str, str] = {}            # extension -> language name
EXTENSION_GRAMMARS: dict[str, str] = {}    # extension -> grammar key, where not the language's own
GRAMMARS: dict[str, Grammar] = {}          # grammar key -> grammar
RULES: dict[str, Rules] = {}               # grammar key -> the view's rules


def derive(table: Mapping[str, Language]) -> tuple[dict[str, str], dict[str, str], dict[str, Grammar],
                                                   dict[str, Rules]]:
    """``EXTENSIONS``, ``EXTENSION_GRAMMARS``, ``GRAMMARS`` and ``RULES`` as ``table`` defines them."""
    extensions: dict[str, str] = {}
    extension_grammars: dict[str, str] = {}
    grammars: dict[str, Grammar] = {}
    rules: dict[str, Rules] = {}
    for lang in table.values():
        for ext in lang.extensions:
            extensions[ext] = lang.name
        extension_grammars.update(lang.extension_grammars)
        if lang.grammar is not None:
            grammars[lang.name] = lang.grammar
        grammars.update(lang.variants)
        if lang.rules is not None:
            rules.update({key: lang.rules for key in lang.keys})
    return extensions, extension_grammars, grammars, rules


def _sync() -> None:
    views: tuple[dict, ...] = (EXTENSIONS, EXTENSION_GRAMMARS, GRAMMARS, RULES)
    derived_views: tuple[dict, ...] = derive(TABLE)
    for view, derived in zip(views, derived_views):
        view.clear()
        view.update(derived)


def register(lang: Language) -> None:
    """Add (or replace) a language at run time; every derived view follows. Parsers are cached by
    grammar key, so a replaced grammar needs a new key (or ``get_parser.cache_clear()``)."""
    TABLE[lang.name] = lang
    _sync()


def unregister(name: str) -> None:
    """Remove a language (a test's temporary entry); unknown names are ignored."""
    TABLE.pop(name, None)
    _sync()


_sync()
