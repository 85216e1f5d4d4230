"""conba bench ivf / plan-100m (conba_research.bench.ivf, ivf_data, plan): the phases on a tiny vector set, each
result keyed in OUT/results.json, and the plan simulated from them."""

from __future__ import annotations

import json
import sys

import numpy as np
import pytest
from click.testing import CliRunner

from conba.cli.main import cli
from conba_research.bench import ivf, plan
from helpers import write_clustered_chunks

pytest.importorskip("faiss")


def test_phase_all_hands_the_other_arguments_to_each_phase():
    assert ivf._without_phase(["--phase", "all", "--real", "R", "-n", "9"]) == ["--real", "R", "-n", "9"]
    assert ivf._without_phase(["-n", "9", "--phase=all", "--out", "O"]) == ["-n", "9", "--out", "O"]


def test_the_subcommands_show_their_help():
    for name in ("ivf", "ivf-encode", "plan-100m", "index-scale"):
        res = CliRunner().invoke(cli, ["bench", name, "-h"])
        assert res.exit_code == 0 and f"usage: conba bench {name}" in res.output, res.output


def _run(monkeypatch, main, *args: str) -> None:
    monkeypatch.setattr(sys, "argv", ["conba bench x", *args])
    main()


@pytest.mark.slow
def test_phases_record_results_and_the_plan_reads_them(tmp_path, monkeypatch):
    real = write_clustered_chunks(tmp_path / "real", 400)
    out = tmp_path / "bench"
    common = ["--real", str(real), "--out", str(out), "-n", "1500", "--queries", "20", "--components", "4",
              "--ivf-above", "500", "--changed-files", "2", "--nprobe", "2", "64", "--rerank", "16"]
    for phase in ("data", "db", "build", "query", "update"):
        _run(monkeypatch, ivf.main, "--phase", phase, *common)
    _run(monkeypatch, ivf.main, "--phase", "query", "--tag", "query-after-update", *common)
    results = json.loads((out / "results.json").read_text())
    assert set(results) == {"data", "db", "build", "query", "update", "query-after-update"}
    assert results["db"]["units"] == 1500 and results["build"]["kind"] == "ivf"  # above --ivf-above
    rows = {r["nprobe"]: r for r in results["query"]["rows"]}
    assert set(rows) == {2, 64} and rows[64]["recall@10"] >= rows[2]["recall@10"]
    assert all(r["n"] == 1500 for r in results.values())
    _run(monkeypatch, plan.main, "--bench", str(out), "--out", str(tmp_path / "plan"), "--nprobe", "64",
         "--rerank", "16", "--fanout", "2", "--fanout-n", "300", "--queries", "10", "--trials", "20")
    result = json.loads((tmp_path / "plan" / "plan.json").read_text())
    assert result["single_shard"]["n"] == 1500 and result["fanout_measured"]["shards"] == 2
    assert [r["functions"] for r in result["plan"]] == [10_000_000, 100_000_000]
    assert result["plan"][1]["shards"] == 100_000_000 // 1500 + 1


@pytest.mark.slow
def test_ivf_encode_writes_unit_chunks_and_resumes(tiny_model, tmp_path, monkeypatch, capsys):
    import sqlite3

    from conba_research.bench import ivf_encode

    folder = tmp_path / "idx"
    folder.mkdir()
    db = sqlite3.connect(folder / "index.sqlite")
    db.execute("CREATE TABLE units (hash TEXT, language TEXT, code TEXT)")
    db.executemany("INSERT INTO units VALUES (?, ?, ?)",
                   [(f"h{i}", "python", f"def f{i}(x):\n    return x + {i}\n") for i in range(600)])
    db.commit()
    db.close()
    args = ["--index", str(folder), "--out", str(tmp_path / "real"), "-m", tiny_model, "--engine", "torch",
            "--device", "cpu", "--dtype", "float32"]
    _run(monkeypatch, ivf_encode.main, *args)
    chunks = sorted((tmp_path / "real").glob("chunk-*.npy"))
    assert [c.name for c in chunks] == ["chunk-00000.npy"]  # 600 functions: one full chunk of 512
    x = np.load(chunks[0])
    assert x.shape[0] == ivf_encode.CHUNK and x.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(x, axis=1), 1, atol=1e-4)
    _run(monkeypatch, ivf_encode.main, *args)
    assert "1 chunks already" in capsys.readouterr().out  # resumed: nothing encoded again


def test_the_benchmarks_that_encode_take_device_and_dtype():
    """issue 49: index-scale and ivf-encode run a model, so they take --device and --dtype as every command
    that runs one (ivf and plan-100m read vectors they are given)."""
    for name in ("index-scale", "ivf-encode"):
        res = CliRunner().invoke(cli, ["bench", name, "-h"])
        assert res.exit_code == 0 and "--device" in res.output and "--dtype" in res.output, (name, res.output)
