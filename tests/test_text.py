"""Tests for conba.text: identifier splitting and lexical tokens."""

from __future__ import annotations

import pytest

from conba.text import code_tokens, split_identifiers, split_words


@pytest.mark.parametrize(
    ("code", "expected"),
    [
        ("getMaxValue", "get Max Value"),
        ("HTTPServer2", "HTTP Server 2"),
        ("max_value", "max value"),
        ("MAX_VALUE", "MAX VALUE"),
        ("parseXMLFile", "parse XML File"),
        ("x2y", "x 2 y"),
        ("a__b", "a b"),
        ("__init__", "__init__"),
        ("_private_var", "_private var"),
        ("simple", "simple"),
    ],
)
def test_split_identifiers_single(code: str, expected: str) -> None:
    assert split_identifiers(code) == expected


def test_split_identifiers_keeps_everything_else() -> None:
    code = 'int  getMax(int[] xs) {\n\tif (xs.length>=0x1F) return 1e9;\n\treturn "camelCase";\n}\n'
    expected = 'int  get Max(int[] xs) {\n\tif (xs.length>=0x1F) return 1e9;\n\treturn "camelCase";\n}\n'
    assert split_identifiers(code) == expected
    assert split_identifiers("") == ""
    assert split_identifiers("a = b + c  # same") == "a = b + c  # same"


def test_split_words() -> None:
    assert split_words("HTTPServer2_max_value") == ["HTTP", "Server", "2", "max", "value"]
    assert split_words("_") == []


def test_code_tokens() -> None:
    assert code_tokens("getMaxValue(x) >= 10;") == [
        "get", "max", "value", "getmaxvalue", "(", "x", ")", ">=", "10", ";",
    ]
    assert code_tokens("a->b += 0xFF") == ["a", "->", "b", "+=", "0xff"]
    assert code_tokens("  \n") == []


def test_code_tokens_naming_conventions_agree() -> None:
    assert code_tokens("max_value") == code_tokens("maxValue") == code_tokens("MAX_VALUE")
    assert code_tokens("max_value") == ["max", "value", "maxvalue"]


def test_non_string_inputs() -> None:
    with pytest.raises(TypeError):
        split_identifiers(None)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        code_tokens(b"x = 1")  # type: ignore[arg-type]
