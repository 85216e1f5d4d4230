"""Per-language syntax facts the perturbations need, as tables over tree-sitter node types.

* names: which leaves are identifiers, where names are declared, where a name is a member / type /
  import (never renamed), which nodes call functions and which declare them;
* statements: block node types, statements never used as positions, dead-statement templates
  (``{v}`` a fresh variable, ``{n}`` a small number), statement types that may be swapped.

Languages without an entry (or without an installed grammar) are left unchanged by renaming,
insertion and swapping; token deletion works for every language.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

ANY = "*"


@dataclass(frozen=True)
class LangSpec:
    idents: frozenset[str]
    decls: dict[str, tuple[str, ...]]                   # node type -> fields holding declared names
    patterns: frozenset[str] = frozenset()              # nodes searched through for declared names
    members: dict[str, tuple[str, ...]] = field(default_factory=dict)  # parent type -> fields: not renameable
    member_fn: Callable[[Any], bool] | None = None     # extra "not renameable" rule on a leaf
    ignore_parents: frozenset[str] = frozenset()        # leaves under these are neither renamed nor blocking
    calls: dict[str, str] = field(default_factory=dict)      # call node type -> callee field ("" first child)
    functions: dict[str, str] = field(default_factory=dict)  # function-declaring node type -> name field
    ident_filter: Callable[[Any], bool] | None = None   # which ident-typed leaves are names at all (PHP)
    exclude: frozenset[str] = frozenset({"main", "Main"})
    blocks: frozenset[str] = frozenset()
    skip_stmts: frozenset[str] = frozenset()
    skip_block_parents: frozenset[str] = frozenset()
    line_start_only: bool = False
    dead: tuple[str, ...] = ()
    simple: frozenset[str] = frozenset()


# descend into these children of a pattern node only when their field is not one of these
NON_NAME_FIELDS = frozenset({"type", "value", "size", "right", "body", "arguments", "parameters", "default_value",
                             "return_type", "dimensions", "key", "superclass", "operator", "condition"})

# token types deleted as a whole (string literals and the like)
ATOMIC = frozenset({
    "string", "string_literal", "char_literal", "character_literal", "raw_string_literal", "system_lib_string",
    "text_block", "verbatim_string_literal", "interpolated_string_expression", "template_string",
    "encapsed_string", "heredoc", "nowdoc", "interpreted_string_literal", "rune_literal", "concatenated_string",
})

_C_SKIP = frozenset({"case_statement", "labeled_statement", "preproc_include", "preproc_def", "preproc_function_def",
                     "preproc_call", "preproc_if", "preproc_ifdef", "preproc_else", "preproc_elif", "ERROR"})


def _kotlin_member(leaf: Any) -> bool:
    parent = leaf.parent
    if parent is None:
        return False
    if parent.type == "navigation_expression":
        return parent.named_children[0] != leaf
    if parent.type == "infix_expression":  # `0 until n`: the middle name is a function
        kids = parent.named_children
        return len(kids) == 3 and kids[1] == leaf
    if parent.type == "value_argument":  # named argument `f(x = 1)`
        nxt = leaf.next_sibling
        return nxt is not None and nxt.type == "="
    return False


def _java_member(leaf: Any) -> bool:
    parent = leaf.parent
    return (parent is not None and parent.type == "method_invocation"
            and parent.child_by_field_name("object") is not None
            and parent.child_by_field_name("name") == leaf)


def _php_variable(leaf: Any) -> bool:
    return leaf.parent is not None and leaf.parent.type == "variable_name"


_PY = LangSpec(
    idents=frozenset({"identifier"}),
    decls={"function_definition": ("name",), "parameters": (ANY,), "lambda_parameters": (ANY,),
           "default_parameter": ("name",), "typed_parameter": (ANY,), "typed_default_parameter": ("name",),
           "assignment": ("left",), "augmented_assignment": ("left",), "for_statement": ("left",),
           "for_in_clause": ("left",), "as_pattern": ("alias",), "named_expression": ("name",)},
    patterns=frozenset({"pattern_list", "tuple_pattern", "list_pattern", "list_splat_pattern",
                        "dictionary_splat_pattern", "typed_parameter", "as_pattern_target", "tuple", "list",
                        "expression_list", "parenthesized_expression"}),
    members={"attribute": ("attribute",), "keyword_argument": ("name",), "dotted_name": (ANY,),
             "aliased_import": (ANY,), "import_from_statement": (ANY,), "class_definition": ("name",)},
    calls={"call": "function"}, functions={"function_definition": "name"},
    exclude=frozenset({"main", "self", "cls"}),
    blocks=frozenset({"module", "block"}), skip_stmts=frozenset({"future_import_statement"}),
    line_start_only=True,
    dead=("{v} = {n}", "{v} = []", "if False:\n{ind}{v} = {n}", "for {v} in range(0):\n{ind}pass"),
    simple=frozenset({"expression_statement"}),
)

_JAVA = LangSpec(
    idents=frozenset({"identifier"}),
    decls={"variable_declarator": ("name",), "formal_parameter": ("name",), "catch_formal_parameter": ("name",),
           "enhanced_for_statement": ("name",), "inferred_parameters": (ANY,), "lambda_expression": ("parameters",),
           "method_declaration": ("name",), "resource": ("name",)},
    members={"field_access": ("field",), "method_reference": (ANY,), "scoped_identifier": (ANY,),
             "import_declaration": (ANY,), "package_declaration": (ANY,), "class_declaration": ("name",),
             "constructor_declaration": ("name",), "interface_declaration": ("name",), "labeled_statement": (ANY,),
             "break_statement": (ANY,), "continue_statement": (ANY,), "enum_declaration": ("name",),
             "record_declaration": ("name",), "enum_constant": ("name",)},
    member_fn=_java_member,
    calls={"method_invocation": "name"}, functions={"method_declaration": "name"},
    blocks=frozenset({"block", "constructor_body"}), skip_stmts=frozenset({"explicit_constructor_invocation"}),
    dead=("int {v} = {n};", "boolean {v} = false;", "if (false) {{ int {v} = {n}; }}", "String {v} = \"\";"),
    simple=frozenset({"local_variable_declaration", "expression_statement"}),
)

_C_DECLS: dict[str, tuple[str, ...]] = {"init_declarator": ("declarator",), "declaration": ("declarator",),
            "parameter_declaration": ("declarator",), "function_declarator": ("declarator",),
            "preproc_def": ("name",), "preproc_function_def": ("name",), "for_range_loop": ("declarator",)}
_C_PATTERNS = frozenset({"pointer_declarator", "array_declarator", "reference_declarator", "init_declarator",
                         "parenthesized_declarator", "structured_binding_declarator", "function_declarator",
                         "attributed_declarator"})
_C = LangSpec(
    idents=frozenset({"identifier"}), decls=_C_DECLS, patterns=_C_PATTERNS,
    members={"qualified_identifier": (ANY,), "using_declaration": (ANY,), "labeled_statement": ("label",),
             "goto_statement": (ANY,)},
    ignore_parents=frozenset({"preproc_params"}),
    calls={"call_expression": "function"}, functions={"function_declarator": "declarator"},
    blocks=frozenset({"compound_statement"}), skip_stmts=_C_SKIP,
    skip_block_parents=frozenset({"switch_statement"}),
    dead=("int {v} = {n};", "if (0) {{ int {v} = {n}; }}", "{{ int {v} = {n}; }}"),
    simple=frozenset({"declaration", "expression_statement"}),
)
_CPP = LangSpec(**{**_C.__dict__, "dead": ("int {v} = {n};", "if (false) {{ int {v} = {n}; }}",
                                          "bool {v} = false;", "{{ int {v} = {n}; }}")})

_CSHARP = LangSpec(
    idents=frozenset({"identifier", "implicit_parameter"}),
    decls={"variable_declarator": ("name",), "parameter": ("name",), "foreach_statement": ("left",),
           "catch_declaration": ("name",), "declaration_expression": ("name",), "method_declaration": ("name",),
           "local_function_statement": ("name",), "lambda_expression": ("parameters",)},
    members={"member_access_expression": ("name",), "qualified_name": (ANY,), "using_directive": (ANY,),
             "generic_name": (ANY,), "name_colon": (ANY,), "member_binding_expression": ("name",),
             "attribute": ("name",), "class_declaration": ("name",), "constructor_declaration": ("name",),
             "namespace_declaration": ("name",), "struct_declaration": ("name",),
             "object_creation_expression": ("type",),
             "variable_declaration": ("type",), "parameter": ("type",), "array_type": ("type",),
             "cast_expression": ("type",), "nullable_type": (ANY,), "type_argument_list": (ANY,),
             "base_list": (ANY,), "typeof_expression": (ANY,), "local_function_statement": ("type",),
             "method_declaration": ("returns",)},
    calls={"invocation_expression": "function"},
    functions={"method_declaration": "name", "local_function_statement": "name"},
    blocks=frozenset({"block"}),
    dead=("int {v} = {n};", "bool {v} = false;", "if (false) {{ int {v} = {n}; }}", "var {v} = {n};"),
    simple=frozenset({"local_declaration_statement", "expression_statement"}),
)

_JS = LangSpec(
    idents=frozenset({"identifier"}),
    decls={"variable_declarator": ("name",), "function_declaration": ("name",), "formal_parameters": (ANY,),
           "arrow_function": ("parameter",), "for_in_statement": ("left",), "catch_clause": ("parameter",)},
    patterns=frozenset({"array_pattern", "rest_pattern", "assignment_pattern", "required_parameter",
                        "optional_parameter"}),
    members={"import_specifier": (ANY,), "import_clause": (ANY,), "namespace_import": (ANY,),
             "export_specifier": (ANY,), "labeled_statement": ("label",), "break_statement": (ANY,),
             "continue_statement": (ANY,), "class_declaration": ("name",), "class": ("name",)},
    calls={"call_expression": "function"}, functions={"function_declaration": "name"},
    blocks=frozenset({"statement_block", "program"}),
    skip_stmts=frozenset({"import_statement", "export_statement"}),
    dead=("let {v} = {n};", "const {v} = [];", "if (false) {{ let {v} = {n}; }}"),
    simple=frozenset({"expression_statement", "lexical_declaration", "variable_declaration"}),
)

_KOTLIN = LangSpec(
    idents=frozenset({"identifier"}),
    decls={"parameter": (ANY,), "variable_declaration": (ANY,), "function_declaration": ("name",),
           "lambda_parameters": (ANY,)},
    members={"user_type": (ANY,), "qualified_identifier": (ANY,), "import": (ANY,), "package_header": (ANY,),
             "class_declaration": (ANY,), "object_declaration": (ANY,), "annotation": (ANY,)},
    member_fn=_kotlin_member,
    calls={"call_expression": ""}, functions={"function_declaration": "name"},
    blocks=frozenset({"block"}), line_start_only=True,
    dead=("val {v} = {n}", "var {v} = listOf<Int>()", "if (false) {{ val {v} = {n} }}"),
    simple=frozenset({"property_declaration", "assignment", "call_expression"}),
)

_PHP = LangSpec(
    idents=frozenset({"name"}), ident_filter=_php_variable,
    decls={"variable_name": (ANY,)},
    exclude=frozenset({"this", "GLOBALS", "_GET", "_POST", "_SERVER", "_COOKIE", "_FILES", "_ENV", "_REQUEST",
                       "_SESSION", "argv", "argc"}),
    blocks=frozenset({"compound_statement"}),
    dead=("${v} = {n};", "${v} = [];", "if (false) {{ ${v} = {n}; }}"),
    simple=frozenset({"expression_statement"}),
)

_RUBY = LangSpec(
    idents=frozenset({"identifier"}),
    decls={"assignment": ("left",), "operator_assignment": ("left",), "method_parameters": (ANY,),
           "optional_parameter": ("name",), "splat_parameter": ("name",), "block_parameters": (ANY,),
           "lambda_parameters": (ANY,), "for": ("pattern",)},
    patterns=frozenset({"left_assignment_list", "destructured_parameter", "rest_assignment",
                        "destructured_left_assignment"}),
    members={"call": ("method",), "method": ("name",), "singleton_method": ("name",), "keyword_parameter": (ANY,),
             "pair": ("key",), "alias": (ANY,)},
    calls={"call": "method"}, functions={"method": "name"},
    blocks=frozenset({"body_statement", "then", "do", "block_body", "program"}), line_start_only=True,
    dead=("{v} = {n}", "{v} = []", "{v} = {n} if false"),
    simple=frozenset({"assignment", "operator_assignment", "call"}),
)

SPECS: dict[str, LangSpec] = {
    "python": _PY, "java": _JAVA, "c": _C, "cpp": _CPP, "csharp": _CSHARP, "javascript": _JS, "typescript": _JS,
    "kotlin": _KOTLIN, "php": _PHP, "ruby": _RUBY,
}


def spec_for(language: str) -> LangSpec | None:
    return SPECS.get(language)
