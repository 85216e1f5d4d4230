"""The index / search / clones / compare commands through click's CliRunner, with the tiny model."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from conba.cli.main import cli

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "polyglot"


@pytest.fixture(scope="module")
def built(tiny_model, tmp_path_factory):
    """The example project indexed once: (index dir, model dir)."""
    folder = tmp_path_factory.mktemp("cli") / "idx"
    result = CliRunner().invoke(cli, ["index", str(EXAMPLE), "--index", str(folder), "--model", tiny_model])
    assert result.exit_code == 0, result.output
    assert "Indexed 51 functions from 11 files" in result.output
    return str(folder), tiny_model


def run(*args: str, input: str | None = None, env: dict | None = None):
    return CliRunner().invoke(cli, list(args), input=input, env=env, catch_exceptions=False)


@pytest.mark.parametrize("command", ["index", "search", "clones", "compare"])
def test_help_has_examples(command):
    result = run(command, "--help")
    assert result.exit_code == 0 and "Examples:" in result.output and "conba " + command in result.output


def test_index_env_var_and_rerun(built, tiny_model, tmp_path):
    folder, _ = built
    result = run("index", str(EXAMPLE), "--json", env={"CONBA_INDEX": folder, "CONBA_MODEL": tiny_model})
    report = json.loads(result.output)
    assert result.exit_code == 0 and report["units_encoded"] == 0 and report["units_total"] == 51


def test_search_jsonl_plain_stdin_and_language(built):
    folder, model = built
    query = EXAMPLE / "python" / "mathlib.py"
    out = run("search", str(query), "--index", folder, "-k", "3")
    rows = [json.loads(line) for line in out.output.splitlines()]
    assert [r["rank"] for r in rows] == [1, 2, 3]
    assert {"score", "file", "start_line", "end_line", "name", "language"} <= set(rows[0])
    go = run("search", "--code", "def gcd(a, b): return a", "--index", folder, "--result-language", "golang", "-k", "2")
    assert [json.loads(line)["language"] for line in go.output.splitlines()] == ["go", "go"]
    plain = run("search", "-", "--index", folder, "--plain", "-k", "1", input="function f() { return 1; }")
    assert plain.exit_code == 0 and plain.output.startswith("  1. ") and "[" in plain.output


def test_clones_formats(built, tmp_path):
    folder, _ = built
    out = run("clones", "--index", folder, "--threshold", "-1", "--cross-language-only", "--min-lines", "3")
    *classes, stats = [json.loads(line) for line in out.stdout.splitlines()]
    assert classes and all(len(c["languages"]) >= 2 for c in classes)
    assert all(m["end_line"] - m["start_line"] + 1 >= 3 for c in classes for m in c["members"])
    stats = stats["stats"]
    assert stats["units"] == 51 and stats["classes"] == len(classes) and stats["skipped_short"] > 0
    assert stats["largest_class"] == max(c["size"] for c in classes)
    assert stats["considered"] + stats["skipped_short"] + sum(stats["skipped_trivial"].values()) == 51
    assert f"units: 51 indexed, {stats['considered']} considered" in out.stderr
    assert f"largest {stats['largest_class']} (" in out.stderr and "pairs per unit" in out.stderr
    csv_out = tmp_path / "pairs.csv"
    run("clones", "--index", folder, "-t", "0.5", "-f", "csv", "--output", str(csv_out))
    rows = list(csv.DictReader(io.StringIO(csv_out.read_text())))
    assert rows and set(rows[0]) >= {"class", "score", "file_a", "start_a", "file_b", "name_b"}
    html_out = tmp_path / "clones.html"
    r = run("clones", "--index", folder, "-x", "-t", "auto", "-f", "html", "--output", str(html_out))
    assert "threshold 0.800" in r.output  # tiny model has no calibrated threshold -> documented default
    page = html_out.read_text()
    assert page.startswith("<!DOCTYPE html>") and "<style>" in page and "<script" not in page
    assert "units considered" in page and "pairs per unit" in page
    assert 'rel="stylesheet"' not in page and 'src="http' not in page
    if "Clone class 1" in page:
        assert 'class="hl"' in page and "file://" in page


def test_compare_files_and_snippets(built):
    _, model = built
    a, b = EXAMPLE / "python" / "mathlib.py", EXAMPLE / "go" / "algo.go"
    out = run("compare", str(a), str(b), "--model", model)
    assert out.exit_code == 0 and "(threshold 0.800)" in out.output and "clone" in out.output
    js = run("compare", "--snippets", "def f(x): return x", "def f(x): return x", "-m", model, "--json", "-t", "0.9")
    d = json.loads(js.output)
    assert d["clone"] is True and d["score"] == pytest.approx(1.0, abs=1e-3)


@pytest.mark.parametrize("args, message", [
    (["search", "--code", "x", "--index", "{tmp}/none"], "none: no index here"),
    (["index", "{tmp}/empty", "--index", "{tmp}/i"], "empty: no source files found"),
    (["index", "{tmp}/bin.py", "--index", "{tmp}/i"], "bin.py: binary file"),
    (["index", "{tmp}/latin.py", "--index", "{tmp}/i"], "latin.py: invalid UTF-8 at line 1"),
    (["index", "{tmp}/big.py", "--index", "{tmp}/i"], "big.py: too large (10.5 MB > limit 1.0 MB"),
    (["index", "{tmp}/notes.txt", "--index", "{tmp}/i"], "notes.txt: unsupported language"),
    (["index", "{tmp}/loop.py", "--index", "{tmp}/i"], "loop.py: symlink loop"),
    (["compare", "{tmp}/bin.py", "{tmp}/ok.py"], "bin.py: binary file"),
    (["compare", "{tmp}/missing.py", "{tmp}/ok.py"], "missing.py: no such file"),
    (["clones", "--index", "{tmp}/i2", "-t", "high"], "threshold must be a number"),
])
def test_bad_input_gives_one_line_error(tmp_path, tiny_model, args, message):
    (tmp_path / "empty").mkdir()
    (tmp_path / "bin.py").write_bytes(b"\0\1\2")
    (tmp_path / "latin.py").write_bytes("x = 'caf\u00e9'\n".encode("latin-1"))
    (tmp_path / "big.py").write_text("x = 1\n" * 1_750_000)
    (tmp_path / "notes.txt").write_text("hi")
    (tmp_path / "ok.py").write_text("def f():\n    return 1\n")
    (tmp_path / "loop.py").symlink_to(tmp_path / "loop.py")
    if args[0] == "clones":
        assert run("index", str(tmp_path / "ok.py"), "--index", str(tmp_path / "i2"), "-m", tiny_model).exit_code == 0
    argv = [a.format(tmp=tmp_path) for a in args] + (["-m", tiny_model] if args[0] != "clones" else [])
    result = CliRunner().invoke(cli, argv)
    assert result.exit_code != 0
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("Error: ") and message in lines[0], result.output


def test_model_mismatch_and_corruption_via_cli(built, tmp_path):
    folder, model = built
    copy = tmp_path / "idx"
    shutil.copytree(folder, copy)
    other = run("search", "--code", "def f(): pass", "--index", str(copy), "-m", "zero-shot")
    assert other.exit_code != 0 and "index was built with model" in other.output and "--rebuild" in other.output
    vec = copy / "vectors.faiss"
    vec.write_bytes(vec.read_bytes()[:100])
    bad = CliRunner().invoke(cli, ["clones", "--index", str(copy)])
    assert bad.exit_code != 0 and "vectors.faiss: vector file is corrupted or truncated" in bad.output
    assert "re-run `conba index`" in bad.output


def test_clones_into_an_existing_folder_is_a_one_line_error(built, tmp_path):
    folder, _ = built
    for fmt in ("html", "jsonl"):
        result = CliRunner().invoke(cli, ["clones", "--index", folder, "-f", fmt, "--output", str(tmp_path)])
        lines = [line for line in result.output.splitlines() if line.strip()]
        assert result.exit_code == 1 and len(lines) == 1, result.output
        assert lines[0].startswith(f"Error: {tmp_path}: is a directory") and "clones.html" in lines[0]
    missing = CliRunner().invoke(cli, ["clones", "--index", folder, "--output", str(tmp_path / "no" / "x.jsonl")])
    assert missing.exit_code == 1 and "does not exist" in missing.output and "Traceback" not in missing.output


def test_clones_keep_trivial_and_grouping(built):
    folder, _ = built

    def stats(*extra: str) -> dict:
        out = run("clones", "--index", folder, "-t", "-1", *extra)
        return json.loads(out.stdout.splitlines()[-1])["stats"]

    default, kept = stats(), stats("--keep-trivial")
    assert default["skipped_trivial"] == {"empty": 3, "accessor": 0, "test": 0}  # Stack.__init__, ...
    assert default["considered"] == 48 and kept["considered"] == 51 and kept["skipped_trivial"]["empty"] == 0
    components = stats("--keep-trivial", "--grouping", "components")
    assert components["classes"] == 1 and components["largest_class"] == 51  # threshold -1: one chain
    assert kept["largest_class"] < 51
