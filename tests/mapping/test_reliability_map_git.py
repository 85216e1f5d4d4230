"""Issue 49 rows 12 and 17 (map): a revision that is not one commit (`^v1`, a range, a newline) is a one-line
error naming the option it came from; conba's git calls never run the repository's core.fsmonitor command; a
drift whose only changes are functions the map leaves out (trivial ones) says so instead of "no source function
changed"."""

from __future__ import annotations

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

BODY = "def {name}(alpha, beta):\n    total = alpha + beta\n    for x in range(total):\n        total += x * {k}\n" \
       "    return total\n"


def git(cwd: Path, *args: str) -> str:
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@t", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@t", GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_SYSTEM=os.devnull)
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


@pytest.fixture()
def repo(tmp_path) -> Path:
    """upstream/ and port/ at tag v1; then upstream's trivial function changes (and nothing else)."""
    root = tmp_path / "repo"
    for side in ("upstream", "port"):
        (root / side).mkdir(parents=True)
        (root / side / "a.py").write_text(BODY.format(name="work", k=3) + "\n\ndef tiny():\n    return 1\n")
    git(root, "init", "-q")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "one")
    git(root, "tag", "v1")
    (root / "upstream" / "a.py").write_text(BODY.format(name="work", k=3) + "\n\ndef tiny():\n    return 2\n")
    return root


@pytest.mark.parametrize("rev, why", [("^v1", "not a revision"), ("v1..HEAD", "unknown revision"),
                                      ("v1\nHEAD", "not a revision"), ("-v1", "not a revision")])
def test_a_revision_that_is_not_one_commit_is_refused(repo, rev, why):
    with pytest.raises(DataError, match=why) as err:
        resolve_revision(repo_root(repo), rev)
    assert "\n" not in str(err.value) and str(err.value).startswith("--since ")
    with pytest.raises(DataError, match="--target-since"):
        resolve_revision(repo_root(repo), rev, "--target-since")
    assert resolve_revision(repo_root(repo), "v1") == git(repo, "rev-parse", "v1").strip()


def _map(repo: Path, tiny_model: str, *more: str, keep_trivial: bool = False):
    config = map_config(repo.parent / "cfg", lexical_weight=1, keep_trivial=keep_trivial)
    return CliRunner().invoke(cli, ["map", str(repo / "upstream"), str(repo / "port"), "-i", str(repo.parent / "idx"),
                                    "-m", tiny_model, "--config", config, "-t", "0.6", *more])


@pytest.mark.parametrize("option", ["--since", "--target-since"])
def test_the_cli_names_the_option_of_a_bad_revision_in_one_line(repo, tiny_model, option):
    more = ["--since", "^v1"] if option == "--since" else ["--since", "v1", "--target-since", "^v1"]
    res = _map(repo, tiny_model, *more)
    assert res.exit_code == 1 and res.output.strip().splitlines() == \
        [f"Error: {option} ^v1: not a revision (give one commit: a tag, branch or commit id)"], res.output
    assert not (repo.parent / "idx").exists()  # refused before anything is indexed
    res = _map(repo, tiny_model, "--since", "v1\nmain")
    assert res.exit_code == 1 and len(res.output.strip().splitlines()) == 1 and "'v1\\nmain'" in res.output


def test_git_calls_never_run_the_repositorys_fsmonitor(repo, tmp_path):
    marker = tmp_path / "ran"
    hook = tmp_path / "hook.sh"
    hook.write_text(f"#!/bin/sh\ntouch '{marker}'\n")
    hook.chmod(0o755)
    git(repo, "config", "core.fsmonitor", str(hook))
    _, changes = function_changes(repo / "upstream", "v1")
    assert {(c.change, c.unit.qualname) for c in changes} == {("changed", "tiny")}
    assert not marker.exists()


def test_drift_of_left_out_functions_says_so(repo, tiny_model):
    res = _map(repo, tiny_model, "--since", "v1")
    assert res.exit_code == 0, res.output
    summary = json.loads(res.stdout.splitlines()[-1])
    assert summary["type"] == "drift_summary" and summary["functions"] == 0 and summary["left_out"] == 1
    assert "no source function changed" not in res.stderr
    assert "no mapped source function changed; 1 changed functions the map leaves out" in res.stderr
    kept = _map(repo, tiny_model, "--since", "v1", keep_trivial=True)
    assert json.loads(kept.stdout.splitlines()[-1])["functions"] == 1
