"""Per-language node types the input view works with (tree-sitter grammar names).

One :class:`Rules` per conba language: which nodes are comments, imports, functions, classes,
C/C++ macros and type aliases, and which nodes the definition walk passes through. The node-type
names were read off the grammars' trees of real files (tests/test_syntax_view.py has one per
language).
"""

from __future__ import annotations

from dataclasses import dataclass, field


def _set(names: str) -> frozenset[str]:
    return frozenset(names.split())


@dataclass(frozen=True)
class Rules:
    comments: frozenset[str]
    imports: frozenset[str]            # directive nodes dropped outright (filters in imports.py)
    functions: frozenset[str]          # function / method definitions (and bodiless declarations)
    classes: frozenset[str] = field(default_factory=frozenset)      # droppable containers of methods
    transparent: frozenset[str] = field(default_factory=frozenset)  # walked through, never dropped
    wrappers: frozenset[str] = field(default_factory=frozenset)     # one definition inside: drop both
    macros: frozenset[str] = field(default_factory=frozenset)       # C/C++ #define / typedef / using X =
    script: bool = False               # top-level statements run (Python, JS/TS, Ruby, PHP)
    static_main: bool = False          # main must be static to be an entry point (Java, C#)


_C_PREPROC = "preproc_if preproc_ifdef preproc_else preproc_elif preproc_elifdef"
_JS_FUNCTIONS = "function_declaration generator_function_declaration method_definition"

RULES: dict[str, Rules] = {
    "python": Rules(
        comments=_set("comment"),
        imports=_set("import_statement import_from_statement future_import_statement"),
        functions=_set("function_definition"), classes=_set("class_definition"),
        transparent=_set("block"), wrappers=_set("decorated_definition"), script=True),
    "java": Rules(
        comments=_set("line_comment block_comment"),
        imports=_set("import_declaration package_declaration"),
        functions=_set("method_declaration constructor_declaration compact_constructor_declaration"),
        classes=_set("class_declaration interface_declaration enum_declaration record_declaration "
                     "annotation_type_declaration"),
        transparent=_set("class_body interface_body enum_body enum_body_declarations annotation_type_body"),
        static_main=True),
    "c": Rules(
        comments=_set("comment"), imports=_set("preproc_include"),
        functions=_set("function_definition"),
        transparent=_set(_C_PREPROC + " linkage_specification declaration_list"),
        macros=_set("preproc_def preproc_function_def type_definition")),
    "cpp": Rules(
        comments=_set("comment"), imports=_set("preproc_include using_declaration"),
        functions=_set("function_definition"),
        classes=_set("class_specifier struct_specifier"),
        transparent=_set(_C_PREPROC + " linkage_specification declaration_list namespace_definition "
                         "field_declaration_list"),
        wrappers=_set("template_declaration"),
        macros=_set("preproc_def preproc_function_def type_definition alias_declaration")),
    "csharp": Rules(
        comments=_set("comment"),
        imports=_set("using_directive file_scoped_namespace_declaration"),
        functions=_set("method_declaration constructor_declaration destructor_declaration "
                       "operator_declaration conversion_operator_declaration local_function_statement"),
        classes=_set("class_declaration struct_declaration interface_declaration record_declaration"),
        transparent=_set("namespace_declaration declaration_list"),
        wrappers=_set("global_statement"), static_main=True),
    "javascript": Rules(
        comments=_set("comment html_comment"), imports=_set("import_statement"),
        functions=_set(_JS_FUNCTIONS), classes=_set("class_declaration"),
        transparent=_set("class_body"), wrappers=_set("export_statement"), script=True),
    "typescript": Rules(
        comments=_set("comment html_comment"), imports=_set("import_statement"),
        functions=_set(_JS_FUNCTIONS + " function_signature"),
        classes=_set("class_declaration abstract_class_declaration"),
        transparent=_set("class_body"), wrappers=_set("export_statement"), script=True),
    "go": Rules(
        comments=_set("comment"), imports=_set("package_clause import_declaration"),
        functions=_set("function_declaration method_declaration")),
    "rust": Rules(
        comments=_set("line_comment block_comment"),
        imports=_set("use_declaration extern_crate_declaration mod_item"),
        functions=_set("function_item function_signature_item"),
        classes=_set("impl_item trait_item"),
        transparent=_set("mod_item declaration_list")),
    "kotlin": Rules(
        comments=_set("line_comment block_comment"), imports=_set("package_header import"),
        functions=_set("function_declaration"),
        classes=_set("class_declaration object_declaration"),
        transparent=_set("class_body companion_object enum_class_body")),
    "php": Rules(
        comments=_set("comment"),
        imports=_set("namespace_use_declaration namespace_definition require_expression "
                     "require_once_expression include_expression include_once_expression"),
        functions=_set("function_definition method_declaration"),
        classes=_set("class_declaration trait_declaration interface_declaration enum_declaration"),
        transparent=_set("declaration_list namespace_definition compound_statement"), script=True),
    "ruby": Rules(
        comments=_set("comment"), imports=frozenset(),  # require lines: imports.py
        functions=_set("method singleton_method"), classes=_set("class module"),
        transparent=_set("body_statement"), script=True),
}
RULES["tsx"] = RULES["typescript"]
RULES["php-only"] = RULES["php"]
