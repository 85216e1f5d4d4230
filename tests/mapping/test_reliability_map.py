"""Issue 41 rows 4, 6, 7, 9 and 10: `map -g` checks its groups file as `eval-repo -g` does and says how many
groups were usable (none: an error, in both); non-UTF-8 and backslash names are matched and kept apart; a tree
reached through a symlink is indexed once and a link into TARGET is reported; the warnings `index` prints are
printed by `map` too."""

from __future__ import annotations

import json
import os

import pytest
from click.testing import CliRunner

from conba.cli.main import cli

ALPHA = "def alpha(xs):\n    total = 0\n    for x in xs:\n        total += x * x\n    return total\n"
BETA = ("def beta(s):\n    out = []\n    for ch in s:\n        if ch.isupper():\n            out.append(ch.lower())\n"
        "    return ''.join(out)\n")
T = "0.999"
pytestmark = pytest.mark.slow


def run(*args: str):
    return CliRunner().invoke(cli, [str(a) for a in args])


def rows(output: str) -> list[dict]:
    return [json.loads(line) for line in output.splitlines() if line.startswith("{")]


@pytest.fixture()
def trees(tmp_path, tiny_model):
    src, tgt = tmp_path / "src", tmp_path / "tgt"
    src.mkdir()
    tgt.mkdir()
    (src / "a.py").write_text(ALPHA + "\n\n" + BETA)
    (tgt / "x.py").write_text(ALPHA)
    return src, tgt, tmp_path / "idx", tiny_model


def _map(trees, *extra: str):
    src, tgt, index, model = trees
    return run("map", src, tgt, "-i", index, "-m", model, "-t", T, *extra)


# ---------------------------------------------------------------- rows 4 and 10: groups files
MEMBER = {"language": "python", "file": "src/a.py", "name": "alpha", "line": 1}


@pytest.mark.parametrize("line,message", [
    ({"group": "g", "members": ["src/a.py"]}, r"members\[0\] must be an object"),
    ({"group": "g", "members": [{**MEMBER, "line": "1"}]}, r"members\[0\]\.line must be a int"),
    ({"group": "g", "files": [1, None]}, r"files\[0\] must be a non-empty string"),
    ({"group": "", "files": ["a.py"]}, "field 'group' must be a non-empty string"),
])
def test_map_groups_are_checked_as_eval_repo_checks_them(trees, line, message):
    groups = trees[2].parent / "groups.jsonl"
    groups.write_text(json.dumps(line) + "\n")
    for args in (["map", *trees[:2], "-i", trees[2], "-m", trees[3], "-g", groups],
                 ["eval-repo", "-i", trees[2], "-g", groups]):
        result = run(*args)
        assert result.exit_code == 1, result.output
        assert "groups.jsonl:1: " in result.output and "Traceback" not in result.output
        assert __import__("re").search(message, result.output), result.output


def test_map_groups_duplicate_group_is_an_error(trees):
    groups = trees[2].parent / "groups.jsonl"
    groups.write_text(json.dumps({"group": "g", "members": [MEMBER]}) + "\n"
                      + json.dumps({"group": "g", "members": [MEMBER]}) + "\n")
    result = _map(trees, "-g", groups)
    assert result.exit_code == 1 and "groups.jsonl:2: group 'g' is already defined on line 1" in result.output


def test_map_groups_with_dotdot_paths_resolve_from_the_groups_folder_and_count_usable(trees):
    folder = trees[2].parent / "meta"
    folder.mkdir()
    groups = folder / "groups.jsonl"
    members = [{**MEMBER, "file": "../src/a.py"}, {**MEMBER, "file": "../tgt/x.py"}]
    groups.write_text(json.dumps({"group": "alpha", "members": members}) + "\n"
                      + json.dumps({"group": "ghost", "members": [{**MEMBER, "file": "../nowhere.py"}]}) + "\n")
    result = _map(trees, "-g", groups)
    assert result.exit_code == 0, result.output
    evaluation = rows(result.stdout)[-1]
    assert evaluation["groups_usable"] == 1 and evaluation["groups_total"] == 2
    assert evaluation["functions"]["precision"] == 1.0
    assert "groups: 1 of 2 usable" in result.stderr


def test_map_groups_with_no_usable_group_is_an_error(trees):
    groups = trees[2].parent / "groups.jsonl"
    groups.write_text(json.dumps({"group": "g", "files": ["elsewhere/z.py"]}) + "\n")
    result = _map(trees, "-g", groups)
    assert result.exit_code == 1
    assert "none of its 1 groups has a member among the source functions" in result.output


def test_eval_repo_with_no_usable_group_is_an_error(trees):
    src, tgt, index, model = trees
    groups = index.parent / "groups.jsonl"
    # both files are indexed, but each group holds files of one language only: no query can be ranked
    groups.write_text(json.dumps({"group": "a", "files": ["src/a.py"]}) + "\n"
                      + json.dumps({"group": "b", "files": ["tgt/x.py"]}) + "\n")
    result = run("eval-repo", src, tgt, "-i", index, "-m", model, "-g", groups, "--baselines", "none",
                 "--no-clones")
    assert result.exit_code == 1, result.output
    assert "no group has files in two languages" in result.output
    groups.write_text(json.dumps({"group": "a", "members": [MEMBER]}) + "\n")
    result = run("eval-repo", "-i", index, "-m", model, "-g", groups, "--baselines", "none", "--no-clones")
    assert result.exit_code == 1 and "no group has members in two languages" in result.output


# ---------------------------------------------------------------- row 6: names the index escapes
def test_a_non_utf8_folder_is_matched_with_the_index_escaping(tmp_path, tiny_model):
    root = os.fsencode(tmp_path)
    src, tgt = root + b"/src\xe9", root + b"/tgt"
    os.mkdir(src)
    os.mkdir(tgt)
    for folder in (src, tgt):
        with open(folder + b"/a.py", "w") as fh:
            fh.write(ALPHA)
    result = run("map", os.fsdecode(src), os.fsdecode(tgt), "-i", tmp_path / "idx", "-m", tiny_model, "-t", T)
    assert result.exit_code == 0, result.output
    (function,) = [r for r in rows(result.stdout) if r["type"] == "function"]
    assert function["status"] == "matched"


def test_a_literal_backslash_name_and_a_non_utf8_name_stay_two_files(tmp_path, tiny_model):
    src, tgt = tmp_path / "src", tmp_path / "tgt"
    src.mkdir()
    tgt.mkdir()
    (src / "x\\xe9.py").write_text(ALPHA)                      # a literal backslash
    with open(os.fsencode(src) + b"/x\xe9.py", "w") as fh:    # a byte that is not UTF-8
        fh.write(BETA)
    (tgt / "t.py").write_text(ALPHA + "\n\n" + BETA)
    result = run("map", src, tgt, "-i", tmp_path / "idx", "-m", tiny_model, "-t", T)
    assert result.exit_code == 0, result.output
    files = [r["source"] for r in rows(result.stdout) if r["type"] == "file"]
    assert len(files) == 2 and len(set(files)) == 2, files


def test_shown_paths_are_one_to_one():
    from conba.index.storage.store import db_path, shown_path

    names = ["/r/x\\xe9.py", os.fsdecode(b"/r/x\xe9.py"), "/r/a\\b.py", "/r/plain.py", os.fsdecode(b"/r/\\\xff.py")]
    shown = [shown_path(db_path(n)) for n in names]
    assert len(set(shown)) == len(names), shown
    assert shown[2] == "/r/a\\b.py" and shown[3] == "/r/plain.py"


# ---------------------------------------------------------------- row 7: symlinks
def test_a_tree_reached_through_a_symlink_is_indexed_once(trees):
    from conba.index import Index

    src, tgt, index, model = trees
    assert _map(trees).exit_code == 0
    link = index.parent / "link"
    link.symlink_to(index.parent)
    result = run("map", link / "src", link / "tgt", "-i", index, "-m", model, "-t", T)
    assert result.exit_code == 0, result.output
    with Index(index, create=False) as idx:
        assert idx.stats()["files"] == 2
    assert "Indexed" not in result.stderr  # nothing new to encode


def test_a_link_inside_source_into_target_is_reported_not_stolen(trees):
    src, tgt, index, _ = trees
    (src / "lnk").symlink_to(tgt)
    result = _map(trees)
    assert result.exit_code == 0, result.output
    assert f"lnk: symlink into {tgt}" in result.stderr
    assert any(r["type"] == "function" and r["status"] == "matched" for r in rows(result.stdout))


def test_a_symlink_loop_given_as_a_path_says_so(tmp_path):
    loop = tmp_path / "loop"
    loop.symlink_to(loop)
    result = run("index", loop, "-i", tmp_path / "idx")
    assert result.exit_code != 0 and "symlink loop" in result.output and "unsupported" not in result.output


# ---------------------------------------------------------------- row 9 and row 11 (skips): what index would say
def test_map_prints_the_warnings_index_prints(trees, monkeypatch):
    import conba.index.storage.builder as builder

    assert _map(trees).exit_code == 0
    stale = str(trees[0] / "a.py")
    real_access = os.access
    monkeypatch.setattr(builder.os, "access", lambda p, mode: False if str(p) == stale else real_access(p, mode))
    result = _map(trees)
    assert result.exit_code == 0, result.output
    assert "warning: " in result.stderr and "a.py: unreadable; kept what was indexed of it" in result.stderr


def test_a_source_of_only_skipped_files_says_why(trees):
    src, tgt, index, model = trees
    (src / "a.py").unlink()
    (src / "bin.py").write_bytes(b"x = 1\0\0\0")
    (src / "min.js").write_text("var a=1;" * 400)
    result = _map(trees)
    assert result.exit_code == 1
    assert "no functions in the source" in result.output and "skipped when indexing" in result.output
    assert "binary" in result.output and "minified" in result.output
    assert "bin.py: binary" in result.stderr


# ---------------------------------------------------------------- row 11: what map says while the index is written
def test_map_while_another_process_writes_the_index(trees):
    from conba.index.storage.lock import IndexLock
    from conba.index.storage.store import Store

    src, tgt, index, model = trees
    assert _map(trees).exit_code == 0
    lock = IndexLock(index)
    lock.acquire()
    try:
        busy = _map(trees)  # map indexes SOURCE and TARGET first: it needs the lock
        assert busy.exit_code == 1 and "is writing this index" in busy.output
        assert "--wait" not in busy.output.replace("`conba index --wait`", "")
        store = Store(index / "index.sqlite")
        store.set_meta(state="building")  # as `conba index --rebuild` leaves it while it runs
        store.close()
        reading = run("map", "-i", index, "--source-lang", "python", "--target-lang", "python")
        assert reading.exit_code == 1 and "is writing this index right now" in reading.output
        assert "languages in the index" not in reading.output
    finally:
        lock.release()


def test_a_model_mismatch_on_map_advises_flags_map_has(trees, tmp_path):
    from conba.model import load_model

    src, tgt, index, model = trees
    assert _map(trees).exit_code == 0
    other = load_model(model)
    other.view = "code" if other.view != "code" else "raw"  # another view: another fingerprint
    other_dir = other.save(tmp_path / "other")
    result = run("map", src, tgt, "-i", index, "-m", other_dir, "-t", T)
    assert result.exit_code == 1 and "use its model (-m" in result.output
    assert "--view" not in result.output and "--rebuild" not in result.output.replace("`conba index --rebuild`", "")
