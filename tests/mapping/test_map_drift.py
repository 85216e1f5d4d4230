"""`conba map SRC TARGET --since REV`: drift of a port on a git repository the test builds (two commits and
working-tree edits), in every output format, with its errors; the function-level git diff alone."""

from __future__ import annotations

import csv
import io
import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from click.testing import CliRunner

from conba.cli.main import cli
from conba.data.records import DataError
from conba.mapping.git_changes import function_changes, repo_root, resolve_revision
from helpers import map_config

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs the git command")


def fn(name: str, words: str, extra: str = "") -> str:
    """A Python function whose identifiers are its own (the lexical score tells them apart)."""
    w = words.split()
    return (f"def {name}({w[0]}, {w[1]}):\n    {w[2]} = {w[0]} + {w[1]}{extra}\n"
            f"    for {w[3]} in range({w[2]}):\n        {w[2]} += {w[3]} * {w[4]}_{w[5]}\n    return {w[2]}\n")


KEEP = fn("keep_same", "alpha beta gamma delta epsilon zeta")
CHANGE = fn("change_me", "apple banana cherry damson elder fig")
CHANGED = fn("change_me", "apple banana cherry damson elder fig", "  # grape harvest")
BOTH = fn("change_both", "red green blue cyan magenta yellow")
BOTH2 = fn("change_both", "red green blue cyan magenta yellow", " - 1")
REMOVE = fn("remove_me", "oak pine birch maple cedar spruce")
GONE = fn("gone_too", "lion tiger puma jaguar lynx ocelot")
NEW = fn("brand_new", "mercury venus earth mars jupiter saturn")


def git(cwd: Path, *args: str) -> str:
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@t", GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_SYSTEM=os.devnull)
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


@pytest.fixture()
def repo(tmp_path) -> Path:
    """upstream/ and port/ in one repository; commit 1 (tag v1) has every function in both, commit 2 changes
    upstream; the working tree then adds a function and deletes a file."""
    root = tmp_path / "repo"
    (root / "upstream").mkdir(parents=True)
    (root / "port").mkdir()
    (root / "upstream" / "a.py").write_text("\n\n".join([KEEP, CHANGE, BOTH, REMOVE]))
    (root / "upstream" / "b.py").write_text(GONE)
    (root / "port" / "a.py").write_text("\n\n".join([KEEP, CHANGE, BOTH, REMOVE]))
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "one")
    git(root, "tag", "v1")
    (root / "upstream" / "a.py").write_text("\n\n".join([KEEP, CHANGED, BOTH2]))
    (root / "port" / "a.py").write_text("\n\n".join([KEEP, CHANGE, BOTH2, REMOVE]))
    git(root, "commit", "-q", "-am", "two")
    (root / "upstream" / "c.py").write_text(NEW)  # untracked: new in the working tree
    (root / "upstream" / "b.py").unlink()
    return root


def test_function_changes_since_a_revision(repo):
    commit, changes = function_changes(repo / "upstream", "v1")
    assert commit == git(repo, "rev-parse", "v1").strip()
    got = {(c.change, c.unit.qualname, Path(c.unit.file).name) for c in changes}
    assert got == {("changed", "change_me", "a.py"), ("changed", "change_both", "a.py"),
                   ("removed", "remove_me", "a.py"), ("removed", "gone_too", "b.py"), ("new", "brand_new", "c.py")}
    _, since_head = function_changes(repo / "upstream", "HEAD")
    assert {(c.change, c.unit.qualname) for c in since_head} == {("removed", "gone_too"), ("new", "brand_new")}
    _, port = function_changes(repo / "port", "v1")
    assert {(c.change, c.unit.qualname) for c in port} == {("changed", "change_both")}


def test_git_errors_are_one_line(repo, tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(DataError, match=r"plain: not in a git working tree"):
        repo_root(plain)
    with pytest.raises(DataError, match=r"--since nope: unknown revision in the git repository"):
        resolve_revision(repo_root(repo), "nope")
    with pytest.raises(DataError, match="not a revision"):
        resolve_revision(repo_root(repo), "--all")


def run(*args: str):
    return CliRunner().invoke(cli, list(args))


def drift_map(repo: Path, tiny_model: str, *more: str, **keys):
    # lexical weight 1: the score is the identifier words' TF-IDF cosine, so each function finds its own copy
    return run("map", str(repo / "upstream"), str(repo / "port"), "-i", str(repo.parent / "idx"), "-m", tiny_model,
               "--config", map_config(repo.parent / "configs", lexical_weight=1, **keys), "-t", "0.6", "--since", "v1",
               *more)


EXPECTED = {("changed", "change_me"): "changed upstream, counterpart unchanged since",
            ("changed", "change_both"): "changed upstream, counterpart changed since",
            ("new", "brand_new"): "new upstream, missing",
            ("removed", "remove_me"): "removed upstream, still in the port",
            ("removed", "gone_too"): "removed upstream, gone from the port"}


def test_since_in_every_format(repo, tiny_model, tmp_path):
    out = drift_map(repo, tiny_model)
    assert out.exit_code == 0, out.output
    lines = [json.loads(x) for x in out.stdout.splitlines()]
    rows = [r for r in lines if r["type"] == "drift"]
    assert {(r["change"], r["source"]["name"]): r["status"] for r in rows} == EXPECTED
    assert next(r for r in rows if r["source"]["name"] == "change_me")["counterpart"]["name"] == "change_me"
    assert next(r for r in rows if r["source"]["name"] == "remove_me")["counterpart"]["file"].endswith("a.py")
    assert next(r for r in rows if r["source"]["name"] == "brand_new")["counterpart"] is None
    assert lines[-1]["type"] == "drift_summary" and lines[-1]["functions"] == 5 and lines[-1]["target_since"] == "v1"
    assert "drift since v1" in out.stderr
    table = list(csv.DictReader(io.StringIO(drift_map(repo, tiny_model, "-f", "csv").stdout)))
    assert {(r["change"], r["source_name"]): r["status"] for r in table} == EXPECTED
    plain = drift_map(repo, tiny_model, "-f", "plain").stdout
    assert all(status in plain for status in EXPECTED.values()) and len(plain.splitlines()) == 5
    html = tmp_path / "drift.html"
    assert drift_map(repo, tiny_model, "-f", "html", "-o", str(html)).exit_code == 0
    page = html.read_text()
    assert "Drift since v1" in page and all(status in page for status in EXPECTED.values())


def test_target_not_tracked_and_min_coverage(repo, tiny_model):
    # a target revision the port's repository does not have is an error naming it
    bad = drift_map(repo, tiny_model, "--target-since", "nope")
    assert bad.exit_code != 0 and "--target-since nope: unknown revision" in bad.output  # issue 49: not --since
    ci = drift_map(repo, tiny_model, min_coverage=100)
    assert ci.exit_code == 1 and "below min_coverage 100%" in ci.output


def test_since_needs_a_git_tree_and_a_known_revision(repo, tiny_model, tmp_path):
    plain = tmp_path / "plain"
    shutil.copytree(repo / "upstream", plain)
    out = run("map", str(plain), str(repo / "port"), "-i", str(tmp_path / "i2"), "-m", tiny_model, "--since", "v1")
    assert out.exit_code != 0 and "not in a git working tree" in out.output
    assert not (tmp_path / "i2").exists()  # checked before anything is indexed
    out = run("map", str(repo / "upstream"), str(repo / "port"), "-i", str(tmp_path / "i3"), "-m", tiny_model,
              "--since", "v9")
    assert out.exit_code != 0 and "--since v9: unknown revision" in out.output
    out = run("map", "-i", str(tmp_path / "i3"), "--source-lang", "python", "--target-lang", "java", "--since", "v1")
    assert out.exit_code == 2 and "--since needs SOURCE" in out.output
    out = run("map", str(repo / "upstream"), str(repo / "port"), "--target-since", "v1")
    assert out.exit_code == 2 and "--target-since goes with --since" in out.output
