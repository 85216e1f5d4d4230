"""`kill -9` during `conba index`, then a re-run: nothing encoded is lost, nothing is duplicated."""

from __future__ import annotations

import json
import os
import signal

import pytest
from click.testing import CliRunner

from conba.cli.main import cli
from helpers import kill_conba_when, sql_count

N_FUNCS = 30


_count = sql_count


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
def test_sigkill_mid_run_then_resume(tmp_path, tiny_model):
    proj = tmp_path / "proj"
    proj.mkdir()
    for f in range(3):
        body = "".join(f"def f{f}_{i}(x):\n    return x * {f * 100 + i} + {i}\n\n" for i in range(N_FUNCS // 3))
        (proj / f"m{f}.py").write_text(body)
    folder = tmp_path / "idx"
    db_path = folder / "index.sqlite"
    env = dict(os.environ, CONBA_INDEX_COMMIT_EVERY="2", CONBA_INDEX_TEST_DELAY="0.25")
    proc = kill_conba_when(["index", str(proj), "--index", str(folder), "--model", tiny_model],
                           lambda: _count(db_path, "SELECT count(*) FROM vectors") >= 4, env, what="indexing")
    assert proc.returncode == -signal.SIGKILL
    done = _count(db_path, "SELECT count(*) FROM vectors")
    assert 4 <= done < N_FUNCS
    assert not (folder / "manifest.json").exists()
    assert (folder / "index.lock").exists()  # left behind, but the kernel dropped the lock with the process
    assert _count(db_path, "SELECT count(*) FROM staged_units") == N_FUNCS  # staged until encoded (staging.py)
    assert _count(db_path, "SELECT count(*) FROM units") == 0

    # searching the half-built index says so
    half = CliRunner().invoke(cli, ["search", "--code", "def f(x): pass", "--index", str(folder)])
    assert half.exit_code != 0 and "interrupted; re-run `conba index`" in half.output

    result = CliRunner().invoke(cli, ["index", str(proj), "--index", str(folder), "--json"],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["units_encoded"] == N_FUNCS - done  # nothing already encoded was redone
    assert report["units_total"] == N_FUNCS
    assert _count(db_path, "SELECT count(*) FROM vectors") == N_FUNCS
    assert _count(db_path, "SELECT count(*) FROM (SELECT DISTINCT file, qualname FROM units)") == N_FUNCS
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["count"] == N_FUNCS
    hits = CliRunner().invoke(cli, ["search", "--code", "def f(x): pass", "--index", str(folder), "-k", "100"])
    names = [json.loads(line)["name"] for line in hits.output.splitlines()]
    assert len(names) == N_FUNCS == len(set(names))
