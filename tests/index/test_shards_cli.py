"""`conba index ROOT --shards 2` makes a sharded index, later runs update it without --shards, and `conba search`
over its folder answers what a single index over the same tree answers (CLI runner, tiny model)."""

from __future__ import annotations

import json

from click.testing import CliRunner

from conba.cli.main import cli
from helpers import write_tree

QUERY = "def q(x):\n    return x * 12 + len('web')\n"


def _tree(root, version: int = 0):
    return write_tree(root, {f"{folder}/m{f}.py": "".join(
        f"def {folder}_{f}_{i}(x):\n    return x * {version * 100 + f * 10 + i} + len('{folder}')\n\n"
        for i in range(4)) for folder in ("core", "util", "web") for f in range(2)})


def _invoke(*args: str) -> str:
    res = CliRunner().invoke(cli, list(args), catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return res.output


def _search(index, *extra: str) -> list:
    out = _invoke("search", "--code", QUERY, "-k", "5", "--index", str(index), *extra)
    return [(d["name"], d["file"].rsplit("proj/", 1)[-1], d["score"]) for d in map(json.loads, out.splitlines())]


def test_sharded_index_and_search_through_the_cli(tmp_path, tiny_model):
    proj, sh, one = _tree(tmp_path / "proj"), tmp_path / "sh", tmp_path / "one"
    out = _invoke("index", str(proj), "--shards", "2", "--index", str(sh), "--model", tiny_model)
    assert "Indexed 24 functions from 6 files in 2 shards" in out and "shard 1: " in out
    assert (sh / "shards.json").is_file() and (sh / "shard-0" / "manifest.json").is_file()
    _invoke("index", str(proj), "--index", str(one), "--model", tiny_model)
    assert _search(sh) == _search(one) and len(_search(sh)) == 5
    assert _search(sh, "--result-language", "python") == _search(one, "--result-language", "python")

    _tree(proj, version=1)  # every function changes: an incremental run of each shard, no --shards needed
    report = json.loads(_invoke("index", str(proj), "--index", str(sh), "--json"))
    assert report["units_total"] == 24 and report["units_encoded"] == 24 and len(report["shards"]) == 2
    _invoke("index", str(proj), "--index", str(one))
    assert _search(sh) == _search(one)


def test_sharded_cli_errors(tmp_path, tiny_model):
    proj, sh = _tree(tmp_path / "proj"), tmp_path / "sh"
    res = CliRunner().invoke(cli, ["index", str(proj / "core"), str(proj / "web"), "--shards", "2", "--index",
                                   str(sh), "--model", tiny_model])
    assert res.exit_code == 2 and "a sharded index is built from one folder" in res.output
    _invoke("index", str(proj), "--shards", "2", "--index", str(sh), "--model", tiny_model)
    res = CliRunner().invoke(cli, ["index", str(proj), "--shards", "3", "--index", str(sh)])
    assert res.exit_code == 1 and "has 2 shards, not 3" in res.output
    for args in (["clones"], ["search", "--files", str(proj / "core" / "m0.py")], ["index", "--rebuild-vectors"]):
        res = CliRunner().invoke(cli, [*args, "--index", str(sh)])
        assert res.exit_code == 1 and "a sharded index (`conba index --shards`)" in res.output, res.output
        assert "shard-0" in res.output and not (sh / "index.sqlite").exists()
