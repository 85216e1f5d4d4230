"""Bad input on the command line gets one-line errors: non-UTF-8 stdin or --code, unknown languages,
a clones report aimed into the index folder; the size hint only where there is --max-file-size;
long inputs are cut before they are tokenised."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from conba.cli.main import cli

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "polyglot"
GCD = "def gcd(a, b):\n    while b:\n        a, b = b, a % b\n    return a\n"


@pytest.fixture(scope="module")
def built(tiny_model, tmp_path_factory) -> str:
    folder = tmp_path_factory.mktemp("cli-input") / "idx"
    result = CliRunner().invoke(cli, ["index", str(EXAMPLE), "--index", str(folder), "--model", tiny_model])
    assert result.exit_code == 0, result.output
    return str(folder)


def _fails(args: list[str], words: str, input: bytes | None = None) -> None:
    result = CliRunner().invoke(cli, args, input=input)
    assert result.exit_code == 1, (result.output, result.exception)
    assert words in result.output and "Traceback" not in result.output, result.output


def test_non_utf8_stdin_and_code_are_one_line_errors(built, tiny_model):
    _fails(["encode", "-", "-m", tiny_model], "stdin: invalid UTF-8 at line 1 (byte 0)", input=b"\xff\xfe")
    _fails(["search", "-", "--index", built], "stdin: invalid UTF-8 at line 2", input=b"def f():\n  \xff\n")
    _fails(["search", "--code", os.fsdecode(b"x = '\xff'"), "--index", built], "--code: invalid UTF-8")
    _fails(["compare", "--snippets", GCD, os.fsdecode(b"\xff"), "-m", tiny_model], "B: invalid UTF-8")
    _fails(["compare", "-", "x.py", "-m", tiny_model], "stdin: invalid UTF-8", input=b"\xff")


def test_a_bom_on_stdin_is_dropped(tiny_model):
    plain = CliRunner().invoke(cli, ["encode", "-", "-m", tiny_model, "-l", "python"], input=GCD.encode())
    bom = CliRunner().invoke(cli, ["encode", "-", "-m", tiny_model, "-l", "python"],
                             input=b"\xef\xbb\xbf" + GCD.encode())
    assert plain.exit_code == bom.exit_code == 0 and plain.output == bom.output


def test_unknown_languages_are_errors_as_on_the_server(built, tiny_model):
    _fails(["search", "--code", GCD, "--result-language", "klingon", "--index", built],
           "--result-language: unknown language 'klingon'")
    _fails(["search", "--code", GCD, "--query-language", "elvish", "--index", built], "unknown language 'elvish'")
    _fails(["compare", "--snippets", GCD, GCD, "--language-a", "nope", "-m", tiny_model],
           "--language-a: unknown language 'nope'")
    ok = CliRunner().invoke(cli, ["search", "--code", GCD, "--result-language", "py", "--index", built, "-k", "2"])
    assert ok.exit_code == 0 and '"language": "python"' in ok.output, ok.output


def test_clones_refuses_an_output_inside_the_index(built):
    before = (Path(built) / "index.sqlite").read_bytes()
    for target in ("index.sqlite", "report.html", "."):
        _fails(["clones", "--index", built, "--output", str(Path(built) / target)], "inside the index folder")
    assert (Path(built) / "index.sqlite").read_bytes() == before
    search = CliRunner().invoke(cli, ["search", "--code", GCD, "--index", built, "-k", "1"])
    assert search.exit_code == 0, search.output


def test_size_hint_only_where_the_option_exists(tmp_path, tiny_model):
    big = tmp_path / "big.py"
    big.write_text("def f():\n    return 1\n" + "# padding\n" * 120_000)
    result = CliRunner().invoke(cli, ["compare", str(big), str(big), "-m", tiny_model])
    assert result.exit_code == 1 and "too large" in result.output and "--max-file-size" not in result.output
    result = CliRunner().invoke(cli, ["index", str(big), "--index", str(tmp_path / "i"), "-m", tiny_model])
    assert result.exit_code == 1 and "raise the limit with --max-file-size" in result.output


def test_long_text_is_cut_before_tokenising(tiny_model, monkeypatch):
    from conba.engine import windows as windowing
    from conba.model import load_model

    m = load_model(tiny_model)
    long = "def f(x):\n    return x + 1\n" * 20_000  # 540k characters, 64-token windows
    normal = [GCD, "int f(int x) { return x; }", long[:5000]]
    expected = m.encode([*normal, long], languages="python")
    seen: list[int] = []
    tok = m.backbone.tokenizer
    real = type(tok).__call__

    def spy(self, text, *args, **kwargs):
        seen.extend(len(t) for t in (text if isinstance(text, list) else [text]))
        return real(self, text, *args, **kwargs)

    monkeypatch.setattr(type(tok), "__call__", spy)
    got = m.encode([*normal, long], languages="python")
    np.testing.assert_array_equal(got, expected)
    assert max(seen) <= 64 * windowing.CHARS_PER_TOKEN < len(long)
    monkeypatch.setattr(windowing, "CHARS_PER_TOKEN", 10**9)  # no cut at all: the same vectors
    np.testing.assert_array_equal(m.encode([*normal, long], languages="python"), got)


def test_a_cut_part_too_short_for_the_window_is_cut_later(tiny_model):
    from conba.engine import windows as windowing
    from conba.model import load_model

    m = load_model(tiny_model)
    width = m.backbone.max_length - 2
    text = " " * (width * windowing.CHARS_PER_TOKEN + 10) + "def f(x):\n    return x\n" * 200
    ids = windowing._first_window_ids(m.backbone.tokenizer, [text], width)[0]
    full = m.backbone.tokenizer(text, add_special_tokens=False)["input_ids"]
    assert len(ids) >= width and ids[:width] == full[:width]


def test_output_is_where_the_result_goes(built, tiny_model, tmp_path):
    """-o/--output FILE: encode writes its vectors there, clones its report (the old --output works too)."""
    vectors = tmp_path / "v.jsonl"
    res = CliRunner().invoke(cli, ["encode", "-", "-m", tiny_model, "-l", "python", "-o", str(vectors)],
                             input=GCD.encode())
    assert res.exit_code == 0 and res.output == "", res.output
    assert len(vectors.read_text().splitlines()) == 1
    for flag in ("-o", "--output"):
        report = tmp_path / f"report{flag}.html"
        res = CliRunner().invoke(cli, ["clones", "-i", built, "-t", "0.5", "-f", "html", flag, str(report)])
        assert res.exit_code == 0 and report.read_text().startswith("<!DOCTYPE html>"), res.output


def test_encode_reads_plain_snippet_lines(tiny_model, tmp_path):
    snippets = tmp_path / "snips.jsonl"
    snippets.write_text(json.dumps({"id": "gcd", "code": GCD}) + "\n" + json.dumps({"code": "int g() { return 1; }",
                                                                                  "language": "java"}) + "\n")
    res = CliRunner().invoke(cli, ["encode", str(snippets), "-m", tiny_model, "-l", "python"])
    assert res.exit_code == 0, res.output
    rows = [json.loads(line) for line in res.output.splitlines()]
    assert [(r["id"], r["language"]) for r in rows] == [("gcd", "python"), ("snips/2", "java")]
    _fails(["encode", str(snippets), "-m", tiny_model], "snips.jsonl:1: missing field 'language'")


def test_code_given_where_a_file_goes_gets_a_hint(built, tiny_model, tmp_path):
    _fails(["search", "def f(): pass", "-i", built, "-m", tiny_model],
           "def f(): pass: no such file; it reads like code: to search for a snippet, pass it with --code")
    _fails(["compare", "def f(): pass", "int f() { }", "-m", tiny_model], "to compare snippets, add --snippets")
    _fails(["encode", "x = 1", "-m", tiny_model], "pipe it to 'conba encode - -l LANG'")
    missing = str(tmp_path / "gone.py")  # a path that is just missing: no hint
    result = CliRunner().invoke(cli, ["search", missing, "-i", built, "-m", tiny_model])
    assert result.exit_code == 1 and result.output.strip().endswith(f"{missing}: no such file"), result.output


def test_encode_output_is_checked_before_the_work(tiny_model, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    afile = tmp_path / "afile"
    afile.write_text("x")
    for output, words in [("", "output file name is empty"), (str(tmp_path), "is a directory; give a file name"),
                          ("nodir/x.jsonl", "folder nodir does not exist"),
                          ("afile/x.jsonl", "folder afile is a file, not a folder")]:
        _fails(["encode", "-", "-m", tiny_model, "-l", "python", "-o", output], words, input=GCD.encode())
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]  # no half-written temporary file anywhere
    _fails(["clones", "-i", str(tmp_path / "idx"), "-o", "afile/x.jsonl"], "afile is a file, not a folder")


def test_a_warning_is_one_line(tiny_model, tmp_path):
    data = tmp_path / "d.jsonl"
    data.write_text(json.dumps({"id": "a", "group": "g", "language": "cobol", "code": "DISPLAY 'HI'."}) + "\n")
    res = CliRunner().invoke(cli, ["encode", str(data), "-m", tiny_model])
    assert res.exit_code == 0, res.output
    warning = [line for line in res.output.splitlines() if "cobol" in line and not line.startswith("{")]
    assert len(warning) == 1 and warning[0].startswith("Warning: ") and "UserWarning" not in res.output, res.output


def test_search_says_when_the_index_lacks_the_result_language(built, tiny_model):
    res = CliRunner().invoke(cli, ["search", "--code", GCD, "--query-language", "python", "--result-language", "rust",
                                   "-i", built, "-m", tiny_model])
    assert res.exit_code == 0 and "no results: the index holds no rust functions (it has cpp, go, " in res.output
    for command in (["search", "--code", GCD], ["clones"]):
        res = CliRunner().invoke(cli, [*command, "-k", "0", "-i", built])
        assert res.exit_code == 2 and "'-k' / '--neighbors': 0 is not in the range x>=1" in res.output, res.output


def test_a_typo_of_a_shipped_model_name_is_named_at_once():
    import time

    start = time.time()
    _fails(["compare", "--snippets", "x = 1", "y = 2", "-m", "defualt"],
           "unknown model 'defualt': no such folder; did you mean 'default'?")
    assert time.time() - start < 20  # no Hugging Face hub retries first
