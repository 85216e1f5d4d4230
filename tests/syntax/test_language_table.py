"""The language table (conba.syntax.language_table): one entry per language, the views derived from it,
and a language added to the table alone being detected, extracted and viewed."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator

import pytest

from conba.source.extract import extract_units
from conba.syntax import language_table, languages, rules
from conba.syntax.language_table import TABLE, Language, derive, register, unregister
from conba.syntax.languages import EXTENSIONS, GRAMMARS, detect_language, get_parser, grammar_key
from conba.syntax.rules import RULES
from conba.syntax.view import apply_view


def test_every_grammar_has_view_rules_and_vice_versa() -> None:
    for lang in TABLE.values():
        assert (lang.grammar is None) == (lang.rules is None), lang.name
        assert not lang.variants or lang.grammar is not None, lang.name
        for key in lang.keys:
            assert key in GRAMMARS and key in RULES, key
    assert set(GRAMMARS) == set(RULES)


def test_every_extension_maps_to_a_declared_language() -> None:
    seen: dict[str, str] = {}
    for lang in TABLE.values():
        assert lang.name == lang.name.strip().lower() and lang.extensions, lang.name
        for ext in lang.extensions:
            assert ext.startswith(".") and ext == ext.lower(), ext
            assert ext not in seen, f"{ext} declared by {seen.get(ext)} and {lang.name}"
            seen[ext] = lang.name
    assert set(EXTENSIONS.values()) <= set(TABLE)


def test_entry_knobs_name_grammars_of_their_language() -> None:
    for lang in TABLE.values():
        for ext, key in lang.extension_grammars.items():
            assert ext in lang.extensions and key in GRAMMARS, (lang.name, ext)
        for key in (lang.retry_grammar, lang.tagless_grammar):
            assert key is None or key in lang.keys, (lang.name, key)
        assert (lang.open_tag is None) == (lang.tagless_grammar is None), lang.name
        if lang.rules is not None:
            assert lang.rules.family, f"{lang.name}: Rules.family is empty"
        assert lang.grammar is None or lang.highlight, f"{lang.name}: no Pygments lexer for the report"


def test_derived_views_equal_the_table() -> None:
    extensions, extension_grammars, grammars, rules_ = derive(TABLE)
    assert EXTENSIONS == extensions and GRAMMARS == grammars and RULES == rules_
    assert language_table.EXTENSION_GRAMMARS == extension_grammars
    # the modules the rest of conba imports from hand out the very same objects
    assert languages.EXTENSIONS is language_table.EXTENSIONS and languages.GRAMMARS is language_table.GRAMMARS
    assert rules.RULES is language_table.RULES and rules.Rules is language_table.Rules
    assert RULES["tsx"] is RULES["typescript"] and RULES["php-only"] is RULES["php"]
    assert grammar_key("a.tsx", "typescript") == "tsx" and grammar_key("a.h", "c") == "cpp"
    assert grammar_key("a.ts", "typescript") == "typescript"


NEW = "pythonish"
PY_FILE = '''import os


class Shape:
    def area(self):
        """The area."""
        return self.w * self.h


def helper(x):
    # doubles
    return x * 2


def main():
    print(helper(21))
'''


@pytest.fixture
def new_language() -> Iterator[Language]:
    """A copy of the Python entry under a new name and extension, in the table only."""
    lang = dataclasses.replace(TABLE["python"], name=NEW, extensions=(".pyish",))
    register(lang)
    try:
        yield lang
    finally:
        unregister(NEW)
    assert NEW not in TABLE and NEW not in GRAMMARS and ".pyish" not in EXTENSIONS


def test_a_language_added_to_the_table_is_detected_extracted_and_viewed(new_language: Language) -> None:
    if get_parser("python") is None:
        pytest.skip("tree-sitter-python is not installed")
    assert detect_language("pkg/shapes.PYISH") == NEW
    assert NEW in languages.supported_languages()
    assert get_parser(NEW) is not None

    units = extract_units("pkg/shapes.pyish", PY_FILE, NEW)
    expected = extract_units("pkg/shapes.py", PY_FILE, "python")
    assert [u.qualname for u in units] == ["Shape.area", "helper", "main"]
    assert [(u.qualname, u.code, u.start_line, u.kind) for u in units] == \
        [(u.qualname, u.code, u.start_line, u.kind) for u in expected]
    assert {u.language for u in units} == {NEW}

    for view in ("code", "code+docs"):
        viewed = apply_view(PY_FILE, NEW, view)
        assert viewed == apply_view(PY_FILE, "python", view)
        assert "import os" not in viewed and "def main" in viewed
    assert "# doubles" not in apply_view(PY_FILE, NEW, "code")


def test_a_language_without_a_grammar_falls_back() -> None:
    lang = TABLE["scala"]
    assert lang.grammar is None and lang.rules is None and "scala" not in GRAMMARS
    code = "object A { def f(x: Int) = x * 2 }\n"
    assert apply_view(code, "scala") == code
    assert [u.kind for u in extract_units("A.scala", code, "scala")] == ["file"]
