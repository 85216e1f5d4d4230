"""conba plagiarism: the neutral token stream, the score, starter code, and the command's outputs."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from conba.cli.main import cli
from conba.plagiarism.check import check
from conba.plagiarism.tokens import tokenize
from helpers.plagiarism import JS_COPY, OTHERS, PY

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "assignment"


def write_class(folder: Path, template: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "orig.py").write_text(template + PY)
    (folder / "copy.js").write_text(JS_COPY)
    for i, code in enumerate(OTHERS):
        (folder / f"indep{i}.py").write_text(template + code)
    return folder


def run(*args: str):
    return CliRunner().invoke(cli, ["plagiarism", *map(str, args)])


def test_stream_ignores_names_and_folds_languages():
    renamed = PY.replace("count_runs", "f").replace("values", "xs").replace("best", "b").replace("run", "r")
    assert [t.kind for t in tokenize(PY, "python")] == [t.kind for t in tokenize(renamed, "python")]
    js = [t.kind for t in tokenize(JS_COPY, "javascript")]
    py = [t.kind for t in tokenize(PY, "python")]
    for kind in ("LOOP", "IF", "ELSE", "RET", "&&", "%", "N:31", "N:17", "+="):
        assert kind in py and kind in js, kind
    assert "N:17" in [t.kind for t in tokenize("int x = 0x11;", "cpp")]
    assert tokenize("anything", "no-such-language") == []


def test_translated_renamed_copy_ranks_first(tmp_path):
    report = check(write_class(tmp_path / "c"))
    top = report.pairs[0]
    assert {top.a, top.b} == {"orig.py", "copy.js"}
    assert top.fragments and top.coverage > 0.3
    assert all(p.score <= top.score for p in report.pairs)


def test_starter_code_does_not_raise_scores(tmp_path):
    template = '''import sys


def read_numbers(stream):
    out = []
    for line in stream:
        line = line.strip()
        if line:
            out.append(int(line) * 1000003 % 65521)
    return out


'''
    plain = check(write_class(tmp_path / "plain"))
    planted = write_class(tmp_path / "planted", template)
    (tmp_path / "starter.py").write_text(template)
    without = check(planted)
    with_base = check(planted, base=tmp_path / "starter.py")

    def indep(report):
        return {frozenset((p.a, p.b)): p.similarity for p in report.pairs
                if "copy.js" not in (p.a, p.b) and {p.a, p.b} != {"orig.py", "copy.js"}}

    base_free, raised, based = indep(plain), indep(without), indep(with_base)
    assert sum(raised.values()) > sum(base_free.values()) + 0.2  # the template alone makes pairs alike
    for pair, sim in based.items():
        assert sim <= base_free[pair] + 0.02, pair  # with --base they are as alike as without any template
    assert {with_base.pairs[0].a, with_base.pairs[0].b} == {"orig.py", "copy.js"}
    assert with_base.base == "starter.py"


def test_cli_formats(tmp_path):
    folder = write_class(tmp_path / "c")
    r = run(folder)
    assert r.exit_code == 0, r.output
    lines = [json.loads(x) for x in r.stdout.splitlines()]
    pairs = [x for x in lines if "a" in x]
    assert len(pairs) == 10 and all({"a", "b", "score", "similarity", "channels"} <= set(p) for p in pairs)
    assert {pairs[0]["a"], pairs[0]["b"]} == {"orig.py", "copy.js"}
    assert "summary" in lines[-1] and lines[-1]["summary"]["submissions"] == 5
    r = run(folder, "-f", "csv")
    assert r.stdout.splitlines()[0].startswith("a,b,score,structure_score,") and len(r.stdout.splitlines()) == 11
    r = run(folder, "--plain")
    assert "orig.py" in r.stdout and "structure" in r.stdout
    r = run(folder, "--top", "1")
    assert r.exit_code == 0 and len([x for x in r.stdout.splitlines() if '"a"' in x]) < 10


@pytest.mark.slow  # highlighting every pair view: about 2 s
def test_cli_html_is_self_contained(tmp_path):
    out = tmp_path / "r.html"
    r = run(write_class(tmp_path / "c"), "-f", "html", "-o", out, "-t", "0.5")
    assert r.exit_code == 0, r.output
    html = out.read_text()
    for part in ('id="overview"', "<svg", 'id="pair-table"', 'id="clusters"', 'class="pairview"', "ab0"):
        assert part in html, part
    assert "http://" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "")  # self-contained


def test_example_assignment_flags_the_copy():
    import conba

    report = conba.check_plagiarism(EXAMPLE / "submissions", base=EXAMPLE / "starter")
    assert {report.pairs[0].a, report.pairs[0].b} == {"alice.py", "dave.js"}
    assert report.pairs[0].suspicious
    assert [set(c) for c in report.clusters] == [{"alice.py", "dave.js"}]
    assert {s.name for s in report.submissions} == {"alice.py", "bob.py", "carol.java", "dave.js", "erin.py", "frank"}


@pytest.mark.parametrize("setup, message", [
    ("empty", "0 submissions to compare"),
    ("one", "1 submission to compare"),
    ("missing", "no such folder"),
    ("file", "is a file"),
    ("in_index", "inside the conba index"),
    ("only_unsupported", "0 submissions to compare"),
])
def test_bad_folders_are_one_line_errors(tmp_path, setup, message):
    folder = tmp_path / "f"
    if setup != "missing":
        folder.mkdir()
    if setup == "one":
        (folder / "a.py").write_text(PY)
    elif setup == "file":
        folder.rmdir()
        folder.write_text(PY)
    elif setup == "in_index":
        (folder / "index.sqlite").write_bytes(b"")
        folder = folder / "sub"
        folder.mkdir()
        (folder / "a.py").write_text(PY)
        (folder / "b.py").write_text(PY)
    elif setup == "only_unsupported":
        (folder / "a.txt").write_text("notes")
        (folder / "b.bin").write_bytes(b"\0\1\2")
    r = run(folder)
    assert r.exit_code != 0
    assert message in r.output and "Traceback" not in r.output
    assert len(r.output.strip().splitlines()) == 1


def test_skips_are_counted(tmp_path):
    folder = write_class(tmp_path / "c")
    (folder / "blob.py").write_bytes(b"\0\0binary")
    (folder / "notes.txt").write_text("not code")
    (folder / "comments.py").write_text("# only a comment\n")
    (folder / "script.py").write_text("n = int(input())\nprint(n * 31 + 17 if n % 7 == 3 else 0)\n")  # no function
    index = folder / "old-index"
    index.mkdir()
    (index / "index.sqlite").write_bytes(b"")
    r = run(folder, "-v")
    assert r.exit_code == 0, r.output
    summary = json.loads(r.stdout.splitlines()[-1])["summary"]
    assert summary["submissions"] == 6  # the five and the script without functions
    assert summary["skipped_by_reason"] == {"binary": 1, "unsupported language": 1, "no code left": 1,
                                            "conba index folder": 1}
    assert "skipped blob.py: binary" in r.stderr


def test_folder_submissions_and_base_inside_folder(tmp_path):
    folder = write_class(tmp_path / "c")
    sub = folder / "team"
    sub.mkdir()
    (sub / "main.py").write_text(OTHERS[0])
    (sub / "README.md").write_text("team notes")
    shutil.copy(folder / "orig.py", folder / "starter.py")
    report = check(folder, base=folder / "starter.py")
    names = {s.name for s in report.submissions}
    assert "team" in names and "starter.py" not in names


def test_bad_options_are_one_line_errors(tmp_path):
    folder = write_class(tmp_path / "c")
    for args, message in (((folder, "-t", "2"), "give a score in [0, 1] or auto"),
                          ((folder, "--base", tmp_path / "missing"), "no such file or folder (--base)"),
                          ((folder, "-o", tmp_path), "is a directory")):
        r = run(*args)
        assert r.exit_code != 0 and message in r.output and "Traceback" not in r.output, r.output
