"""A sharded index under bad input (issue 49): a huge --shards is refused in one line, a missing or damaged shard
is an error (never a silent partial answer), top-level non-code files are skipped as `conba index` skips them,
a shards.json that points outside the root or is malformed is one line naming the file, empty shards are not
listed as removed, and shards on two models name the fix (CLI runner, tiny model)."""

from __future__ import annotations

import json
import shutil

import pytest
from click.testing import CliRunner

from conba.cli.main import cli
from conba.index import CodeIndexError
from conba.index.scale.shard_layout import MAX_SHARDS
from conba.index.scale.shards import ShardedIndex
from helpers import write_tree

QUERY = "def q(x):\n    return x * 12 + len('web')\n"


def _tree(root):
    return write_tree(root, {f"{folder}/m.py": "".join(
        f"def {folder}_{i}(x):\n    return x * {i} + len('{folder}')\n\n" for i in range(3))
        for folder in ("core", "util", "web")})


def _run(*args: str):
    return CliRunner().invoke(cli, list(args))


def _one_line_error(res, *needles: str) -> None:
    assert res.exit_code != 0 and "Traceback" not in res.output, res.output
    line = res.output.strip().splitlines()[-1]
    assert line.startswith("Error:") and all(n in line for n in needles), res.output


@pytest.mark.parametrize("count", ["99999999999999999999", "10000000", str(MAX_SHARDS + 1), "0"])
def test_a_huge_shard_count_is_refused_before_anything_is_made(tmp_path, count):
    proj, sh = _tree(tmp_path / "proj"), tmp_path / "sh"
    res = _run("index", str(proj), "--shards", count, "--index", str(sh))
    assert res.exit_code == 2 and f"1<=x<={MAX_SHARDS}" in res.output and not sh.exists(), res.output
    with pytest.raises(CodeIndexError, match=f"must be 1..{MAX_SHARDS}"):
        ShardedIndex(sh, shards=int(count))


@pytest.fixture()
def built(tmp_path, tiny_model):
    """A three-shard index of core/util/web plus top-level non-code files (README.md, LICENSE, CLONES.json)."""
    proj = _tree(tmp_path / "proj")
    for name, text in (("README.md", "# proj\n"), ("LICENSE", "MIT\n"), ("CLONES.json", "{}\n")):
        (proj / name).write_text(text)
    sh = tmp_path / "sh"
    res = _run("index", str(proj), "--shards", "3", "--index", str(sh), "--model", tiny_model)
    assert res.exit_code == 0 and "Indexed 9 functions from 3 files in 3 shards" in res.output, res.output
    return proj, sh


def test_top_level_non_code_files_are_skipped_like_conba_index(built):
    proj, sh = built
    assert json.loads((sh / "shards.json").read_text())["in_use"] == [0, 1, 2]
    (proj / "docs").mkdir()
    (proj / "docs" / "guide.md").write_text("# guide\n")  # a folder without code: skipped, no error
    (proj / "node_modules" / "x").mkdir(parents=True)  # vendored: no shard's, as `conba index` skips it
    (proj / "node_modules" / "x" / "i.js").write_text("function f() { return 1; }\n")
    res = _run("index", str(proj), "--index", str(sh), "--json")
    assert res.exit_code == 0 and json.loads(res.output)["units_total"] == 9, res.output
    assert "node_modules" not in json.loads((sh / "shards.json").read_text())["prefixes"]
    (proj / "main.py").write_text("def main():\n    return 0\n")  # a top-level source file goes to shard 0
    res = _run("index", str(proj), "--index", str(sh), "--json")
    assert res.exit_code == 0 and json.loads(res.output)["units_total"] == 10, res.output
    (proj / "main.py").unlink()  # and a deleted one leaves it (it was an explicit path before: kept for good)
    res = _run("index", str(proj), "--index", str(sh), "--json")
    assert json.loads(res.output)["units_total"] == 9 and json.loads(res.output)["files_removed"] == 1


@pytest.mark.slow  # a sharded index built, searched twice and rebuilt per case: seconds
@pytest.mark.parametrize("damage", ["folder", "manifest", "bad-manifest"])
def test_a_missing_or_damaged_shard_is_an_error_not_a_partial_answer(built, damage):
    proj, sh = built
    ok = _run("search", "--code", QUERY, "-k", "20", "--index", str(sh))
    assert ok.exit_code == 0 and len(ok.output.splitlines()) == 9
    if damage == "folder":
        shutil.rmtree(sh / "shard-1")
    elif damage == "manifest":
        (sh / "shard-1" / "manifest.json").unlink()
    else:
        (sh / "shard-1" / "manifest.json").write_text("{not json")
    res = _run("search", "--code", QUERY, "-k", "20", "--index", str(sh))
    _one_line_error(res, "shard-1")
    assert f"conba index {proj} --index {sh}" in res.output or damage == "bad-manifest", res.output
    res = _run("index", str(proj), "--index", str(sh))  # the fix the error names
    assert res.exit_code == 0 and len(_run("search", "--code", QUERY, "-k", "20", "--index",
                                            str(sh)).output.splitlines()) == 9


@pytest.mark.parametrize("layout, why", [
    ({"shards": 2, "root": None, "prefixes": {"../../elsewhere": 1}}, "not a top-level folder name"),
    ({"shards": 2, "root": None, "prefixes": {"/etc": 0}}, "not a top-level folder name"),
    ({"shards": 2, "root": None, "prefixes": {"core": 5}}, "shard 5 is not 0..1"),
    ({"shards": 2, "root": None, "prefixes": {"core": "0"}}, "shard '0' is not 0..1"),
    ({"shards": 2, "root": None, "prefixes": ["core"]}, "'prefixes' must map"),
    ({"root": None}, "'shards' must be a number"),
    ({"shards": 10 ** 20}, "'shards' must be a number"),
    ({"shards": 2, "root": "relative/path"}, "'root' must be an absolute folder"),
    ({"shards": 2, "in_use": [7]}, "'in_use' must list"),
    ([1, 2], "a JSON object expected"),
    ("{broken", "invalid JSON"),
])
def test_a_bad_shards_json_is_one_line_naming_the_file(tmp_path, tiny_model, layout, why):
    proj, sh = _tree(tmp_path / "proj"), tmp_path / "sh"
    elsewhere = write_tree(tmp_path / "elsewhere", {"secret.py": "def secret():\n    return 42\n"})
    assert elsewhere.is_dir()
    sh.mkdir()
    (sh / "shards.json").write_text(layout if isinstance(layout, str) else json.dumps(layout))
    for args in (["index", str(proj)], ["search", "--code", QUERY]):
        res = _run(*args, "--index", str(sh), "--model", tiny_model)
        _one_line_error(res, str(sh / "shards.json"), why)
    assert not (sh / "shard-0").exists() and not (sh / "shard-1").exists()


def test_never_used_shards_are_not_listed_as_removed(tmp_path, tiny_model):
    proj, sh = _tree(tmp_path / "proj"), tmp_path / "sh"
    res = _run("index", str(proj), "--shards", "40", "--index", str(sh), "--model", tiny_model)
    assert res.exit_code == 0 and "(removed)" not in res.output, res.output
    assert "in 3 shards (37 of 40 hold no source file)" in res.output
    assert len([line for line in res.output.splitlines() if line.startswith("  shard ")]) == 3
    shutil.rmtree(proj / "web")
    res = _run("index", str(proj), "--index", str(sh))
    assert res.exit_code == 0 and res.output.count("(removed)") == 1, res.output


def test_shards_on_two_models_name_the_fix(built, tiny_model, tmp_path):
    proj, sh = built
    manifest = sh / "shard-2" / "manifest.json"
    m = json.loads(manifest.read_text())
    manifest.write_text(json.dumps({**m, "fingerprint": "another", "model": "other-model"}))
    res = _run("search", "--code", QUERY, "--index", str(sh))
    _one_line_error(res, "different models", "shard-2: other-model", f"conba index {proj} --index {sh} --rebuild")


def test_serve_and_search_files_refuse_a_sharded_folder_saying_what_works(built):
    proj, sh = built
    res = _run("serve", "--index", str(sh), "--port", "0")
    _one_line_error(res, "a sharded index", "serve one shard", "shard-0")
    res = _run("search", "--files", str(proj / "core" / "m.py"), "--index", str(sh))
    _one_line_error(res, "a sharded index", "search --files", "shard-0")
    assert "`conba search` read it whole" not in res.output
